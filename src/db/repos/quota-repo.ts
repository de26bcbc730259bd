import { hasSqlState, jsonb, type Sql } from '../sql.js';

/** One account's daily counter, and what a reservation adds to it within its limit. */
export interface QuotaCounter {
  accountId: string;
  day: string;
  n: number;
  limit: number;
}

/** What reserve_daily_quota (migration 0037) raises when a counter has no room: the statement rolled back. */
const QUOTA_REFUSED = 'MQ429';

export const isQuotaRefused = (err: unknown): boolean => hasSqlState(err, QUOTA_REFUSED);

/** Counters as reserve_daily_quota takes them: one JSON parameter. */
export function quotaCounters(sql: Sql, counters: QuotaCounter[]) {
  return jsonb(
    sql,
    counters.map((c) => ({ account_id: c.accountId, day: c.day, n: c.n, cap: c.limit })),
  );
}

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

    /**
     * `reserve` for several counters in one statement, each all or nothing against its own limit: answers, in
     * the order given, each counter's usage after, or undefined where it was refused. At most one counter per
     * account and day (one INSERT ... ON CONFLICT cannot change a row twice). The rows are taken in account
     * order, so that two such statements never wait on each other crosswise.
     */
    async reserveEach(counters: QuotaCounter[]): Promise<(number | undefined)[]> {
      const at = (accountId: string, day: string) => `${accountId} ${day}`;
      if (new Set(counters.map((c) => at(c.accountId, c.day))).size !== counters.length)
        throw new Error('reserveEach: one counter per account and day');
      const rows = await sql<{ account_id: string; day: string; used: number }[]>`
        with async_commit as (select set_config('synchronous_commit', 'off', true)),
        r as (
          select * from jsonb_to_recordset(${quotaCounters(sql, counters)}) as r(account_id text, day date, n int, cap int))
        insert into quota_usage as q (account_id, day, used)
        select r.account_id, r.day, r.n from r, async_commit where r.n <= r.cap
        order by r.account_id, r.day
        on conflict (account_id, day) do update set used = q.used + excluded.used
        where q.used + excluded.used <= (select r.cap from r where r.account_id = excluded.account_id and r.day = excluded.day)
        returning account_id, day::text as day, used`;
      const used = new Map(rows.map((r) => [at(r.account_id, r.day), r.used]));
      return counters.map((c) => used.get(at(c.accountId, c.day)));
    },

    /**
     * `reserve` for a key with a daily_quota of its own: the key's count and the account's in one transaction,
     * both or neither. One statement takes the key's row first (always in that order, so two such reservations
     * never wait on each other crosswise) and the account's only if the key's had room; a key that had room in
     * an account that had none rolls back. Answers which refused, if either did. Keys without a daily_quota
     * never come here, so their sends cost the one statement of `reserve` and nothing more.
     */
    async reserveWithKey(
      accountId: string,
      keyId: string,
      day: string,
      n: number,
      limits: { account: number; key: number },
    ): Promise<'account' | 'key' | undefined> {
      const accountRefused = new Error('the account has no room: roll the key back');
      try {
        return await sql.begin(async (tx) => {
          const [row] = await tx<{ key_used: number | null; account_used: number | null }[]>`
            with async_commit as (select set_config('synchronous_commit', 'off', true)),
            k as (
              insert into api_key_quota_usage as u (api_key_id, day, used)
              select ${keyId}, ${day}::date, ${n} from async_commit where ${n}::int <= ${limits.key}::int
              on conflict (api_key_id, day) do update set used = u.used + excluded.used
              where u.used + excluded.used <= ${limits.key}::int
              returning used
            ),
            a as (
              insert into quota_usage as q (account_id, day, used)
              select ${accountId}, ${day}::date, ${n} from k where ${n}::int <= ${limits.account}::int
              on conflict (account_id, day) do update set used = q.used + excluded.used
              where q.used + excluded.used <= ${limits.account}::int
              returning used
            )
            select (select used from k) as key_used, (select used from a) as account_used`;
          if (row!.key_used === null) return 'key' as const;
          if (row!.account_used === null) throw accountRefused;
          return undefined;
        });
      } catch (err) {
        if (err === accountRefused) return 'account';
        throw err;
      }
    },

    async release(accountId: string, day: string, n: number): Promise<void> {
      await sql`update quota_usage set used = greatest(used - ${n}, 0) where account_id = ${accountId} and day = ${day}::date`;
    },

    async releaseKey(keyId: string, day: string, n: number): Promise<void> {
      await sql`update api_key_quota_usage set used = greatest(used - ${n}, 0) where api_key_id = ${keyId} and day = ${day}::date`;
    },

    async keyUsed(keyId: string, day: string): Promise<number> {
      const [row] = await sql<
        { used: number }[]
      >`select used from api_key_quota_usage where api_key_id = ${keyId} and day = ${day}::date`;
      return row?.used ?? 0;
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
