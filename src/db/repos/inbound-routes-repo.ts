import postgres from 'postgres';
import type { InboundRouteRow } from '../../domain/entities/inbound.js';
import { WILDCARD } from '../../domain/inbound-addresses.js';
import { AppError } from '../../errors.js';
import type { Sql } from '../sql.js';

type Raw = {
  id: string;
  account_id: string;
  domain_id: string;
  local_part: string;
  domain: string;
  created_at: Date;
};
const toRoute = (r: Raw): InboundRouteRow => ({
  id: r.id,
  accountId: r.account_id,
  domainId: r.domain_id,
  localPart: r.local_part,
  domain: r.domain,
  createdAt: r.created_at,
});

/** The unique key that gives a match to one account across the service (migration 29). */
const MATCH_KEY = 'inbound_routes_domain_local_part_key';

/**
 * Inbound routes (migration 29): the addresses each account receives mail at, `local@domain` or `*@domain`, in
 * key form. A match is unique across accounts, so resolving a recipient is one lookup of the unique key.
 */
export function createInboundRoutesRepo(sql: Sql) {
  return {
    /** Stores a new route; 409 when any account has this match already. */
    async create(route: Omit<InboundRouteRow, 'createdAt'>): Promise<InboundRouteRow> {
      try {
        const [row] = await sql<Raw[]>`
          insert into inbound_routes (id, account_id, domain_id, local_part, domain)
          values (${route.id}, ${route.accountId}, ${route.domainId}, ${route.localPart}, ${route.domain})
          returning *`;
        return toRoute(row!);
      } catch (err) {
        // Whose route it is stays unsaid: another account's addresses are none of the caller's business.
        if (err instanceof postgres.PostgresError && err.code === '23505' && err.constraint_name === MATCH_KEY)
          throw new AppError('conflict', `match: ${route.localPart}@${route.domain} is already routed`, {
            cause: err,
          });
        throw err;
      }
    },

    /** One page of an account's routes, newest first, and how many it has in all. */
    async page(accountId: string, limit: number, offset: number): Promise<{ rows: InboundRouteRow[]; total: number }> {
      const [rows, [count]] = await Promise.all([
        sql<Raw[]>`select * from inbound_routes where account_id = ${accountId}
          order by created_at desc, id desc limit ${limit} offset ${offset}`,
        sql<{ n: number }[]>`select count(*)::int as n from inbound_routes where account_id = ${accountId}`,
      ]);
      return { rows: rows.map(toRoute), total: count?.n ?? 0 };
    },

    /** Deletes a route of the account (any account's when `accountId` is undefined: the operator's call). */
    async delete(accountId: string | undefined, id: string): Promise<boolean> {
      const owned = accountId === undefined ? sql`` : sql`and account_id = ${accountId}`;
      return (await sql`delete from inbound_routes where id = ${id} ${owned} returning id`).length > 0;
    },

    /**
     * The route that takes `localPart@domain`: the exact one, else the domain's wildcard. One probe of the
     * unique key (domain, local_part) for at most two entries: this runs for every RCPT TO the listener is given.
     */
    async find(domain: string, localPart: string): Promise<InboundRouteRow | undefined> {
      const [row] = await sql<Raw[]>`
        select * from inbound_routes where domain = ${domain} and local_part in (${localPart}, ${WILDCARD})
        order by local_part = ${WILDCARD} limit 1`;
      return row && toRoute(row);
    },

    /** The distinct domains routes are on, of each of these sender domains (their inbound MX records). */
    async domainsOf(domainIds: readonly string[]): Promise<{ domainId: string; domain: string }[]> {
      if (domainIds.length === 0) return [];
      return sql<{ domainId: string; domain: string }[]>`
        select distinct domain_id as "domainId", domain from inbound_routes
        where domain_id = any(${domainIds as string[]}::text[]) order by domain`;
    },
  };
}
export type InboundRoutesRepo = ReturnType<typeof createInboundRoutesRepo>;
