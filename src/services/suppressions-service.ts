import type { AccountsRepo, SuppressionsRepo } from '../db/index.js';
import { filterOf, SUPPRESSION_REASONS, SUPPRESSION_SCOPES } from '../domain/catalog.js';
import type { SuppressionFilter, SuppressionRow } from '../domain/entities/suppressions.js';
import { toPage } from '../domain/pagination.js';
import { suppressionAddress, suppressionEntry, suppressionRule } from '../domain/suppression-rules.js';
import { AppError, invalid, notFound } from '../errors.js';
import { exportHeaderLine, exportLine, readImport, type RowError } from './suppression-csv.js';

/** A list query as the request gives it ('' and 0: not given). */
export interface SuppressionQuery {
  email: string;
  reason: string;
  scope: string;
  topic: string;
  page: number;
  pageSize: number;
}

export interface ImportResult {
  imported: number;
  skipped: number;
  errors: RowError[];
}

/**
 * An account's own suppression list (CONTRACT.md "Streams, one-click unsubscribe and suppressions"): list,
 * add, remove, import and export. Every call is for the caller's account alone. Addresses are kept in their key
 * form (address.ts), so `USER@Example.COM` and `user@example.com` are one suppression. The caller has
 * authenticated the account and checked the key's permission; an operator's call (the management API) names the
 * account, which assertAccount checks exists.
 */
export function createSuppressionsService(deps: {
  suppressions: SuppressionsRepo;
  accounts?: Pick<AccountsRepo, 'get'>;
}) {
  const { suppressions } = deps;

  function filterFrom(q: SuppressionQuery): SuppressionFilter {
    const filter: SuppressionFilter = {};
    const email = q.email.trim();
    // A whole address matches itself (as canonicalised); anything else is a part of one.
    if (email !== '') {
      try {
        filter.email = { exact: suppressionAddress(email, 'email') };
      } catch {
        filter.email = { contains: email };
      }
    }
    const reason = filterOf('reason', SUPPRESSION_REASONS, q.reason);
    if (reason !== undefined) filter.reason = reason;
    const scope = filterOf('scope', SUPPRESSION_SCOPES, q.scope);
    if (scope !== undefined) filter.scope = scope;
    if (q.topic !== '') filter.topic = suppressionRule({ scope: 'broadcast', topic: q.topic }).topic;
    return filter;
  }

  return {
    /** 404 unless the account exists: an operator's call names one (an API key's is its own). */
    async assertAccount(accountId: string): Promise<void> {
      if (deps.accounts && !(await deps.accounts.get(accountId))) throw notFound('account', accountId);
    },

    /**
     * The management API's list: the newest `limit` of the account's suppressions that match the filters (the
     * public list's), with how many match in all.
     */
    async newest(
      accountId: string,
      q: Omit<SuppressionQuery, 'page' | 'pageSize'>,
      limit: number,
    ): Promise<{ rows: SuppressionRow[]; total: number }> {
      return suppressions.page(accountId, filterFrom({ ...q, page: 0, pageSize: 0 }), limit, 0);
    },

    /** One page of the account's suppressions, newest first, with how many match. */
    async list(accountId: string, q: SuppressionQuery): Promise<{ rows: SuppressionRow[]; total: number }> {
      const filter = filterFrom(q);
      const { limit, offset } = toPage(q.page, q.pageSize, 'page_size');
      return suppressions.page(accountId, filter, limit, offset);
    },

    /** Adds a `manual` suppression, or answers the one the account has already (whatever its reason). */
    async add(accountId: string, given: { email: string; scope: string; topic: string }): Promise<SuppressionRow> {
      return (await suppressions.add(accountId, suppressionEntry(given), 'manual')).row;
    },

    /**
     * Removes the address's suppression of `scope` (and `topic`), or every one of the address when no scope is
     * given; a 404 when there is none. Answers how many were removed.
     */
    async remove(accountId: string, given: { email: string; scope: string; topic: string }): Promise<number> {
      const address = suppressionAddress(given.email, 'email');
      if (given.scope === '' && given.topic !== '')
        throw invalid('topic is only allowed with scope "broadcast": give scope=broadcast');
      const rule = given.scope === '' ? undefined : suppressionRule(given);
      const removed = await suppressions.remove(accountId, address, rule);
      if (removed === 0) {
        const which =
          rule === undefined ? '' : ` (scope ${rule.scope}${rule.topic === '' ? '' : `, topic ${rule.topic}`})`;
        throw new AppError('not_found', `No suppression of ${address}${which}`);
      }
      return removed;
    },

    /**
     * Reads a CSV of up to 100,000 rows and adds its valid rows as `manual` suppressions in a few set-based
     * statements; answers how many were added, how many the account had already, and the rows refused.
     */
    async import(accountId: string, csv: string): Promise<ImportResult> {
      const { entries, errors } = readImport(csv);
      const imported = await suppressions.addMany(accountId, entries, 'manual');
      return { imported, skipped: entries.length - imported, errors };
    },

    /**
     * The account's whole list as CSV, a chunk of lines at a time from a cursor (oldest first). The header comes
     * with the first chunk, so a database that does not answer fails the first read, before anything is sent.
     */
    async *exportCsv(accountId: string): AsyncGenerator<string> {
      let header = exportHeaderLine;
      for await (const rows of suppressions.everyOf(accountId)) {
        yield header + rows.map(exportLine).join('');
        header = '';
      }
      if (header !== '') yield header;
    },

    /**
     * The export with its first chunk already read: a database that does not answer throws here, while the caller
     * can still answer with a status, not in the middle of a streamed body.
     */
    async openExport(accountId: string): Promise<AsyncIterable<string>> {
      const lines = this.exportCsv(accountId);
      const first = await lines.next();
      return (async function* () {
        if (!first.done) yield first.value;
        yield* lines;
      })();
    },

    /** The whole export as one string (gRPC answers it in one message). */
    async exportText(accountId: string): Promise<string> {
      let csv = '';
      for await (const chunk of await this.openExport(accountId)) csv += chunk;
      return csv;
    },
  };
}
export type SuppressionsService = ReturnType<typeof createSuppressionsService>;
