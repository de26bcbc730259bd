import type { Client } from '@temporalio/client';
import { ensurePeriodicSchedule } from './periodic-schedule.js';

/** One schedule per task queue: installations (and test stacks) sharing a namespace keep theirs apart. */
export const retentionScheduleId = (taskQueue: string) => `retention-${taskQueue}`;

/**
 * Hourly: each run removes what expired since the last one in a few batches, and a backlog (the first run
 * on a large database, or after the days were lowered) is worked off in runs of at most the time budget.
 */
export const RETENTION_EVERY = '1 hour';

/** The Temporal schedule of retention (periodic-schedule.ts). The days are the worker's settings, read by the activity. */
export async function ensureRetentionSchedule(client: Client, options: { taskQueue: string }): Promise<void> {
  await ensurePeriodicSchedule(client, {
    scheduleId: retentionScheduleId(options.taskQueue),
    every: RETENTION_EVERY,
    taskQueue: options.taskQueue,
    workflowType: 'purgeExpiredDataWorkflow', // workflows/purge-expired-data.ts
    executionTimeout: '50 minutes',
  });
}
