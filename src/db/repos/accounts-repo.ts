import type { AccountStatus } from '../../domain/catalog.js';
import { idAt } from '../../ids.js';
import type { Sql } from '../sql.js';
import type { AccountRow } from '../../domain/entities/accounts.js';

type Raw = {
  id: string;
  name: string;
  status: AccountStatus;
  daily_quota: number;
  status_changed_at: Date;
  created_at: Date;
  brand_name: string | null;
  brand_logo_url: string | null;
};
const toAccount = (r: Raw): AccountRow => ({
  id: r.id,
  name: r.name,
  status: r.status,
  dailyQuota: r.daily_quota,
  statusChangedAt: r.status_changed_at,
  createdAt: r.created_at,
  brandName: r.brand_name,
  brandLogoUrl: r.brand_logo_url,
});

async function moveHealth(
  sql: Sql,
  id: string,
  from: AccountStatus,
  to: AccountStatus,
  reviewQuotaFactor: number,
): Promise<boolean> {
  const rows = await sql`
    update accounts set
      status = ${to}::text,
      status_changed_at = now(),
      quota_before_review = case when ${to}::text = 'review' then daily_quota when ${to}::text = 'healthy' then null else quota_before_review end,
      daily_quota = case
        when ${to}::text = 'review' then ceil(daily_quota * ${reviewQuotaFactor}::float8)::int
        when ${to}::text = 'healthy' then coalesce(quota_before_review, daily_quota)
        else daily_quota end
    where id = ${id} and status = ${from}::text
    returning id`;
  return rows.length > 0;
}

export function createAccountsRepo(sql: Sql) {
  return {
    async create(a: { id: string; name: string; dailyQuota: number }): Promise<AccountRow> {
      const [row] = await sql<Raw[]>`
        insert into accounts (id, name, daily_quota) values (${a.id}, ${a.name}, ${a.dailyQuota})
        returning id, name, status, daily_quota, status_changed_at, created_at, brand_name, brand_logo_url`;
      return toAccount(row!);
    },

    async get(id: string): Promise<AccountRow | undefined> {
      const [row] = await sql<
        Raw[]
      >`select id, name, status, daily_quota, status_changed_at, created_at, brand_name, brand_logo_url from accounts where id = ${id}`;
      return row && toAccount(row);
    },

    async list(): Promise<AccountRow[]> {
      const rows = await sql<
        Raw[]
      >`select id, name, status, daily_quota, status_changed_at, created_at, brand_name, brand_logo_url from accounts order by id`;
      return rows.map(toAccount);
    },

    /**
     * An operator's change. Setting a status (even the same one) restarts the health window; returning to
     * `healthy` gives back a quota the health policy reduced, unless a quota is set in the same change.
     */
    async update(
      id: string,
      patch: { status?: AccountStatus; dailyQuota?: number; brandName?: string | null; brandLogoUrl?: string | null },
    ): Promise<AccountRow | undefined> {
      const status = patch.status ?? null;
      const quota = patch.dailyQuota ?? null;
      // Branding: absent leaves the field as it is, null clears it.
      const setName = patch.brandName !== undefined;
      const setLogo = patch.brandLogoUrl !== undefined;
      const [row] = await sql<Raw[]>`
        update accounts set
          status = coalesce(${status}, status),
          status_changed_at = case when ${status}::text is not null then now() else status_changed_at end,
          daily_quota = coalesce(${quota}::int, case when ${status}::text = 'healthy' then quota_before_review end, daily_quota),
          quota_before_review = case when ${quota}::int is not null or ${status}::text = 'healthy' then null else quota_before_review end,
          brand_name = case when ${setName} then ${patch.brandName ?? null}::text else brand_name end,
          brand_logo_url = case when ${setLogo} then ${patch.brandLogoUrl ?? null}::text else brand_logo_url end
        where id = ${id}
        returning id, name, status, daily_quota, status_changed_at, created_at, brand_name, brand_logo_url`;
      return row && toAccount(row);
    },

    /**
     * A move of the health policy, only if the account is still `from` (an operator's change in between
     * wins). Entering review keeps the quota aside and reduces it; back to healthy restores it.
     */
    moveHealth: (id: string, from: AccountStatus, to: AccountStatus, reviewQuotaFactor: number) =>
      moveHealth(sql, id, from, to, reviewQuotaFactor),

    /**
     * Accounts the health policy may move without a new event: those in review (recovery), and healthy ones
     * with a bounce or complaint since `since` (more sends can bring them to the minimum volume).
     */
    async toJudge(since: Date): Promise<string[]> {
      const rows = await sql<{ id: string }[]>`
        select id from accounts where status = 'review'
        union
        select distinct e.account_id from events e join accounts a on a.id = e.account_id
        where a.status = 'healthy' and e.id >= ${idAt('event', since)} and e.type in ('bounce', 'complaint')
        limit 1000`;
      return rows.map((r) => r.id);
    },

    async usedToday(id: string, day: string): Promise<number> {
      const [row] = await sql<
        { used: number }[]
      >`select used from quota_usage where account_id = ${id} and day = ${day}::date`;
      return row?.used ?? 0;
    },

    /** Raises the quota to `to` only where it is still `from` (an operator's own quota is kept). */
    async raiseQuotaFrom(id: string, from: number, to: number): Promise<void> {
      await sql`update accounts set daily_quota = ${to} where id = ${id} and daily_quota = ${from}`;
    },
  };
}
export type AccountsRepo = ReturnType<typeof createAccountsRepo>;
