import type { AccountStatus } from '../../domain/catalog.js';
import type { Sql } from '../sql.js';

export interface AccountRow {
  id: string;
  name: string;
  status: AccountStatus;
  dailyQuota: number;
  createdAt: Date;
}

export interface AccountStats {
  sentToday: number;
  bounceRate: number;
  complaintRate: number;
}

type Raw = { id: string; name: string; status: AccountStatus; daily_quota: number; created_at: Date };
const toAccount = (r: Raw): AccountRow => ({ id: r.id, name: r.name, status: r.status, dailyQuota: r.daily_quota, createdAt: r.created_at });

export function createAccountsRepo(sql: Sql) {
  return {
    async create(a: { id: string; name: string; dailyQuota: number }): Promise<AccountRow> {
      const [row] = await sql<Raw[]>`
        insert into accounts (id, name, daily_quota) values (${a.id}, ${a.name}, ${a.dailyQuota})
        returning id, name, status, daily_quota, created_at`;
      return toAccount(row!);
    },

    async get(id: string): Promise<AccountRow | undefined> {
      const [row] = await sql<Raw[]>`select id, name, status, daily_quota, created_at from accounts where id = ${id}`;
      return row && toAccount(row);
    },

    async list(): Promise<AccountRow[]> {
      const rows = await sql<Raw[]>`select id, name, status, daily_quota, created_at from accounts order by id`;
      return rows.map(toAccount);
    },

    async update(id: string, patch: { status?: AccountStatus; dailyQuota?: number }): Promise<AccountRow | undefined> {
      const [row] = await sql<Raw[]>`
        update accounts set
          status = coalesce(${patch.status ?? null}, status),
          status_changed_at = case when ${patch.status ?? null}::text is not null and ${patch.status ?? null} <> status then now() else status_changed_at end,
          daily_quota = coalesce(${patch.dailyQuota ?? null}::int, daily_quota)
        where id = ${id}
        returning id, name, status, daily_quota, created_at`;
      return row && toAccount(row);
    },

    /** Raises the quota to `to` only where it is still `from` (an operator's own quota is kept). */
    async raiseQuotaFrom(id: string, from: number, to: number): Promise<void> {
      await sql`update accounts set daily_quota = ${to} where id = ${id} and daily_quota = ${from}`;
    },

    /**
     * Emails accepted today and the bounce and complaint rates over the last 7 days (recipient events
     * per sent email). The health policy's own window lives with the health rules.
     */
    async stats(id: string, day: string): Promise<AccountStats> {
      const [row] = await sql<{ sent_today: number; sent: number; bounces: number; complaints: number }[]>`
        select
          coalesce((select used from quota_usage where account_id = ${id} and day = ${day}::date), 0)::int as sent_today,
          (select count(*) from emails where account_id = ${id} and sent_at > now() - interval '7 days')::int as sent,
          (select count(*) from events where account_id = ${id} and type = 'bounce' and created_at > now() - interval '7 days')::int as bounces,
          (select count(*) from events where account_id = ${id} and type = 'complaint' and created_at > now() - interval '7 days')::int as complaints`;
      const r = row!;
      return {
        sentToday: r.sent_today,
        bounceRate: r.sent === 0 ? 0 : r.bounces / r.sent,
        complaintRate: r.sent === 0 ? 0 : r.complaints / r.sent,
      };
    },
  };
}
export type AccountsRepo = ReturnType<typeof createAccountsRepo>;
