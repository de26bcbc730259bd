import { proxyLocalActivities } from '@temporalio/workflow';
import type { JobActivities } from '../src/temporal/job-activities.js';

const { fireDueScheduled } = proxyLocalActivities<JobActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/** One second's worth of scheduled emails. */
export const SCHEDULE_BUCKET_MS = 1000;

/**
 * The scheduled emails due within one second (workflow id `scheduled-<that second>`), started with a
 * delayed start at the second's beginning, so nothing is held in worker memory while they wait and they
 * survive restarts of the worker and of Temporal. At its time one local activity fires them all into the
 * delivery queue: a thousand emails due at once cost one workflow task, not a thousand.
 */
export async function scheduledSecondWorkflow(input: { from: number }): Promise<number> {
  return fireDueScheduled({ from: input.from, to: input.from + SCHEDULE_BUCKET_MS });
}
