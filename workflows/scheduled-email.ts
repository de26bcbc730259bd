import { proxyLocalActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../src/temporal/activities.js';

const { fireDueScheduled, prepareScheduled } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/** One second's worth of scheduled emails. */
export const SCHEDULE_BUCKET_MS = 1000;

/** Less time than this before the second is not worth preparing in. */
const LEAST_LEAD_MS = 1000;

export interface ScheduledSecond {
  from: number;
  /** Set by starts that come early to prepare (client.ts, PREPARE_LEAD_MS; absent in workflows older code started at their second). */
  prepare?: boolean;
}

/**
 * The scheduled emails due within one second (workflow id `scheduled-<task queue>-<that second>`), started with a
 * delayed start a few seconds before the second (client.ts, PREPARE_LEAD_MS), so nothing is held in worker memory while
 * they wait and they survive restarts of the worker and of Temporal. It builds their messages, waits for
 * the second on a durable timer, and then one local activity fires them all into the delivery queue: a
 * thousand emails due at once cost three workflow tasks, not a thousand.
 */
export async function scheduledSecondWorkflow(input: ScheduledSecond): Promise<number> {
  const to = input.from + SCHEDULE_BUCKET_MS;
  let prepared: Record<string, string> = {};
  if (input.prepare && input.from - Date.now() >= LEAST_LEAD_MS) {
    const ready = await prepareScheduled({ from: input.from, to, until: input.from - LEAST_LEAD_MS / 2 });
    prepared = ready.prepared;
    // Measured by the activity as it ends: the workflow's own clock stands still during a local activity.
    if (ready.waitMs > 0) await sleep(ready.waitMs);
  }
  return fireDueScheduled({ from: input.from, to, prepared });
}
