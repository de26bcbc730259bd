import { filterOf } from '../domain/catalog.js';
import { toPage } from '../domain/pagination.js';
import { assertAllowed } from '../domain/permissions.js';
import { notFound } from '../errors.js';
import type { Principal } from './auth-service.js';

interface OwnedRepo<Row, Status> {
  get(accountId: string, id: string): Promise<Row | undefined>;
  list(
    accountId: string,
    status: Status | undefined,
    limit: number,
    offset: number,
  ): Promise<{ rows: Row[]; total: number }>;
}

/**
 * Reading an account's own jobs (batch jobs, scheduled emails): by id, another account's being as unknown
 * as a missing one (404), and by page, filtered by a status the caller names in `filters`' words.
 */
export function ownedReads<Row, Status, Filter extends string>(
  repo: OwnedRepo<Row, Status>,
  what: string,
  filters: readonly Filter[],
  toStatus: (filter: Filter) => Status,
) {
  return {
    async get(principal: Principal, id: string): Promise<Row> {
      assertAllowed(principal.permission, principal.accountStatus, 'read');
      const row = await repo.get(principal.accountId, id);
      if (!row) throw notFound(what, id);
      return row;
    },

    async list(
      principal: Principal,
      q: { page: number; limit: number; status: string },
    ): Promise<{ rows: Row[]; total: number }> {
      assertAllowed(principal.permission, principal.accountStatus, 'read');
      const { limit, offset } = toPage(q.page, q.limit, 'limit');
      const filter = filterOf('status', filters, q.status);
      return repo.list(principal.accountId, filter === undefined ? undefined : toStatus(filter), limit, offset);
    },
  };
}
