import type { StoredStatuses } from '../../domain/dns-records.js';
import type { Sql, Tx } from '../sql.js';
import { timedRead } from './timed-read.js';
import type { DomainRow, DnsCheckState } from '../../domain/entities/domains.js';

type Raw = {
  id: string;
  account_id: string;
  name: string;
  verification_token: string;
  verified_at: Date | null;
  open_tracking: boolean;
  click_tracking: boolean;
  created_at: Date;
  dns_checked_at: Date | null;
  dns_statuses: StoredStatuses;
  dns_failing_since: Date | null;
};
const toDomain = (r: Raw): DomainRow => ({
  id: r.id,
  accountId: r.account_id,
  name: r.name,
  verificationToken: r.verification_token,
  verifiedAt: r.verified_at,
  openTracking: r.open_tracking,
  clickTracking: r.click_tracking,
  createdAt: r.created_at,
  dnsCheckedAt: r.dns_checked_at,
  dnsStatuses: r.dns_statuses,
  dnsFailingSince: r.dns_failing_since,
});

/**
 * The rows a caller may touch: `owner` is the calling key's account, whose rows alone it sees (another account's
 * row is as absent as a missing one); undefined is the operator, who acts on any account's.
 */
const ownedBy = (sql: Sql | Tx, owner: string | undefined) =>
  owner === undefined ? sql`` : sql`and account_id = ${owner}`;

/** What deleting a domain removed with it (see delete). */
export interface DomainDeletion {
  accountId: string;
  name: string;
  inboundRoutes: number;
  cancelledScheduled: number;
}

export function createDomainsRepo(sql: Sql) {
  return {
    /**
     * Adds the domain unless the account has it already (`exists`) or has `max` domains (`full`), counted in the
     * insert's own statement.
     */
    async create(
      d: { id: string; accountId: string; name: string; verificationToken: string },
      max: number,
    ): Promise<DomainRow | 'exists' | 'full'> {
      const [row] = await sql<(Raw & { full?: boolean })[]>`
        insert into domains (id, account_id, name, verification_token)
        select ${d.id}, ${d.accountId}, ${d.name}, ${d.verificationToken}
        where (select count(*) from domains where account_id = ${d.accountId}) < ${max}
        on conflict (account_id, name) do nothing
        returning *`;
      if (row) return toDomain(row);
      const [taken] = await sql`select 1 from domains where account_id = ${d.accountId} and name = ${d.name}`;
      return taken ? 'exists' : 'full';
    },

    /** The domain, if it is `owner`'s (any account's when undefined). */
    async get(id: string, owner?: string): Promise<DomainRow | undefined> {
      const [row] = await sql<Raw[]>`select * from domains where id = ${id} ${ownedBy(sql, owner)}`;
      return row && toDomain(row);
    },

    async listByAccount(accountId: string): Promise<DomainRow[]> {
      return (await sql<Raw[]>`select * from domains where account_id = ${accountId} order by id`).map(toDomain);
    },

    /** One page of an account's domains, oldest first, and how many it has (a few: count(*) is cheap). */
    async page(accountId: string, limit: number, offset: number): Promise<{ rows: DomainRow[]; total: number }> {
      const [rows, [count]] = await Promise.all([
        sql<Raw[]>`select * from domains where account_id = ${accountId} order by id limit ${limit} offset ${offset}`,
        sql<{ n: number }[]>`select count(*)::int as n from domains where account_id = ${accountId}`,
      ]);
      return { rows: rows.map(toDomain), total: count?.n ?? 0 };
    },

    /**
     * Deletes `owner`'s domain (any account's when undefined) in one transaction: its DKIM keys (the foreign
     * key cascades), its inbound routes (mail they received stays), and the account's scheduled emails still
     * waiting to be sent from it, which are cancelled: they would otherwise go out from a domain the account no
     * longer has, unsigned. Emails already accepted stay as they are. The row is locked first, so a route
     * being added to it at the same moment waits and then finds it gone.
     */
    async delete(owner: string | undefined, id: string): Promise<DomainDeletion | undefined> {
      return sql.begin(async (tx) => {
        const [row] = await tx<{ account_id: string; name: string }[]>`
          select account_id, name from domains where id = ${id} ${ownedBy(tx, owner)} for update`;
        if (!row) return undefined;
        const routes = await tx`delete from inbound_routes where domain_id = ${id} returning id`;
        // From addresses are stored with their domain in its ASCII form, lower case, as domain names are.
        const cancelled = await tx`
          update scheduled_emails set status = 'cancelled', cancelled_at = now()
          where account_id = ${row.account_id} and status = 'enqueued' and split_part(from_address, '@', 2) = ${row.name}
          returning id`;
        await tx`delete from domains where id = ${id}`;
        return {
          accountId: row.account_id,
          name: row.name,
          inboundRoutes: routes.length,
          cancelledScheduled: cancelled.length,
        };
      }) as Promise<DomainDeletion | undefined>;
    },

    async findByName(accountId: string, name: string): Promise<DomainRow | undefined> {
      const [row] = await sql<Raw[]>`select * from domains where account_id = ${accountId} and name = ${name}`;
      return row && toDomain(row);
    },

    /** Marks the domain verified; answers whether it is the account's first verified domain. */
    async markVerified(id: string): Promise<{ domain: DomainRow; first: boolean } | undefined> {
      return sql.begin(async (tx) => {
        const [row] = await tx<
          Raw[]
        >`update domains set verified_at = coalesce(verified_at, now()) where id = ${id} returning *`;
        if (!row) return undefined;
        const [other] =
          await tx`select 1 from domains where account_id = ${row.account_id} and id <> ${id} and verified_at is not null limit 1`;
        return { domain: toDomain(row), first: !other };
      }) as Promise<{ domain: DomainRow; first: boolean } | undefined>;
    },

    async recordDnsCheck(id: string, check: DnsCheckState): Promise<DomainRow | undefined> {
      const [row] = await sql<Raw[]>`
        update domains set dns_checked_at = ${check.checkedAt}, dns_statuses = ${sql.json(check.statuses as never)},
          dns_failing_since = ${check.failingSince}
        where id = ${id} returning *`;
      return row && toDomain(row);
    },

    /**
     * Verified domains whose required records were failing at their last check (dns_failing_since set), for
     * /metrics: cut off past `timeoutMs` like the delivery queue's statistics.
     */
    async countDnsFailing(timeoutMs: number): Promise<number> {
      const query = sql<{ failing: number }[]>`
        select count(*)::int as failing from domains where verified_at is not null and dns_failing_since is not null`;
      const [row] = await timedRead(query, timeoutMs, 'the count of domains whose DNS records fail');
      return row?.failing ?? 0;
    },

    /** Verified domains whose records were last checked before `before` (or never), least recently checked first. */
    async dueForRecheck(before: Date, limit: number): Promise<DomainRow[]> {
      const rows = await sql<Raw[]>`
        select * from domains where verified_at is not null and (dns_checked_at is null or dns_checked_at < ${before})
        order by dns_checked_at nulls first limit ${limit}`;
      return rows.map(toDomain);
    },

    async updateTracking(
      owner: string | undefined,
      id: string,
      patch: { openTracking?: boolean; clickTracking?: boolean },
    ): Promise<DomainRow | undefined> {
      const [row] = await sql<Raw[]>`
        update domains set
          open_tracking = coalesce(${patch.openTracking ?? null}::boolean, open_tracking),
          click_tracking = coalesce(${patch.clickTracking ?? null}::boolean, click_tracking)
        where id = ${id} ${ownedBy(sql, owner)} returning *`;
      return row && toDomain(row);
    },
  };
}
export type DomainsRepo = ReturnType<typeof createDomainsRepo>;
