import type { Sql } from '../sql.js';

/** The lists whose totals the *_counted_* triggers keep in list_counts (src/db/schema.sql has them, with their why). */
export const COUNTED_LISTS = ['emails', 'scheduled', 'batch'] as const;
export type CountedList = (typeof COUNTED_LISTS)[number];

/**
 * How many rows of an account's list match a status and (emails only) a job type, exactly, from the
 * counters the triggers keep in the writing transactions (src/db/schema.sql, list_counts_*): a sum over at most a few
 * hundred rows, whatever the list's length. float8 holds any count exactly up to 2^53.
 */
export async function countedTotal(
  sql: Sql,
  accountId: string,
  list: CountedList,
  filter: { status?: string; jobType?: string },
): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select coalesce(sum(n), 0)::float8 as n from list_counts
    where account_id = ${accountId} and list = ${list}
      ${filter.status ? sql`and status = ${filter.status}` : sql``}
      ${filter.jobType ? sql`and job_type = ${filter.jobType}` : sql``}`;
  return row!.n;
}
