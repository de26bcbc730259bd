import type { BucketLease, BucketStore } from '../../domain/token-bucket.js';
import type { Sql } from '../sql.js';

/**
 * The rate limit's buckets shared by every API process: one row per key in the UNLOGGED table
 * rate_buckets (migration 0011). A lease is one autocommitted upsert that refills the bucket by the time
 * since it was last counted (PostgreSQL's clock, so the processes' clocks do not matter), takes up to
 * `want` whole tokens and answers what it took and what is left: the arithmetic of domain/token-bucket.ts.
 * The row lock is held for the statement only (no round trip to this process inside a transaction), and
 * the commit is asynchronous: the table is not WAL-logged anyway, so there is nothing to wait for.
 */
export function createRateBucketsRepo(sql: Sql): BucketStore {
  return {
    async lease(key: string, want: number, rate: number): Promise<BucketLease> {
      // `at` never goes back: a statement that waited on the row lock read the clock before a later one
      // that got the lock first. A new bucket is full, less what this lease takes.
      const [row] = await sql<{ tokens: number; granted: number }[]>`
        with clock as (select set_config('synchronous_commit', 'off', true), clock_timestamp() as at)
        insert into rate_buckets as b (key_id, tokens, refilled_at, granted)
        select ${key}, ${rate}::float8 - least(${want}::int, ${rate}::int), clock.at, least(${want}::int, ${rate}::int) from clock
        on conflict (key_id) do update set (tokens, granted, refilled_at) = (
          select r.tokens - g.granted, g.granted, r.at
          from (select greatest(excluded.refilled_at, b.refilled_at) as at) t
          cross join lateral (select t.at, least(${rate}::float8, b.tokens + extract(epoch from t.at - b.refilled_at)::float8 * ${rate}::float8) as tokens) r
          cross join lateral (select greatest(0, least(${want}::int, floor(r.tokens + 1e-9)::int)) as granted) g
        )
        returning tokens, granted`;
      return { tokens: row!.tokens, granted: row!.granted };
    },
  };
}
