import type { Sql } from '../sql.js';
import type { QueueStats } from '../../domain/entities/delivery.js';
import { timedRead } from './timed-read.js';

/**
 * The delivery queue at a glance, for /metrics: entries waiting for a workflow, entries claimed by one
 * (their first attempt under way), and the age of the oldest. One statement over the narrow queue table;
 * cancelled (and rejected) past `timeoutMs`, so a scrape never waits on a slow or exhausted database.
 */
export async function deliveryQueueStats(sql: Sql, timeoutMs: number): Promise<QueueStats> {
  const query = sql<{ waiting: number; claimed: number; oldest_age: number | null }[]>`
    select count(*) filter (where group_id is null)::int as waiting, count(*) filter (where group_id is not null)::int as claimed,
      extract(epoch from now() - min(enqueued_at))::float8 as oldest_age
    from delivery_queue`;
  const [row] = await timedRead(query, timeoutMs, 'the delivery queue statistics');
  return {
    waiting: row?.waiting ?? 0,
    claimed: row?.claimed ?? 0,
    oldestAgeSeconds: Math.max(0, row?.oldest_age ?? 0),
  };
}
