import type { Sql } from '../sql.js';

/**
 * Daily usage counters. The increment commits asynchronously (synchronous_commit off) so the counter row's
 * lock is held for microseconds, not for a WAL flush: that lock is what serialises one account's sends.
 * A crash may forget the last few increments; the emails themselves are committed durably elsewhere.
 */
export function createQuotaRepo(sql: Sql) {
  return {
    /** Adds `n` to the day's usage if it stays within `limit`; answers the usage after, or undefined if refused. */
    async reserve(accountId: string, day: string, n: number, limit: number): Promise<number | undefined> {
      // One autocommitted statement, not BEGIN / SET LOCAL / upsert / COMMIT: the row lock then ends with
      // the statement inside PostgreSQL instead of waiting a round trip through this process for COMMIT
      // (docs/benchmark.md, "Figures behind the code's choices"). set_config(..., true)
      // makes this statement's own transaction commit asynchronously, as SET LOCAL did.
      const [row] = await sql<{ used: number }[]>`
        with async_commit as (select set_config('synchronous_commit', 'off', true))
        insert into quota_usage (account_id, day, used)
        select ${accountId}, ${day}::date, ${n} from async_commit where ${n}::int <= ${limit}::int
        on conflict (account_id, day) do update set used = quota_usage.used + excluded.used
        where quota_usage.used + excluded.used <= ${limit}::int
        returning used`;
      return row?.used;
    },

    async release(accountId: string, day: string, n: number): Promise<void> {
      await sql`update quota_usage set used = greatest(used - ${n}, 0) where account_id = ${accountId} and day = ${day}::date`;
    },

    async used(accountId: string, day: string): Promise<number> {
      const [row] = await sql<
        { used: number }[]
      >`select used from quota_usage where account_id = ${accountId} and day = ${day}::date`;
      return row?.used ?? 0;
    },
  };
}
export type QuotaRepo = ReturnType<typeof createQuotaRepo>;
