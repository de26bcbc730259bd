import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleOptionsAction, type ScheduleSpec } from '@temporalio/client';

/** One schedule per task queue: installations (and test stacks) sharing a namespace keep theirs apart. */
export const retentionScheduleId = (taskQueue: string) => `retention-${taskQueue}`;

/**
 * Hourly: each run removes what expired since the last one in a few batches, and a backlog (the first run
 * on a large database, or after the days were lowered) is worked off in runs of at most the time budget.
 */
export const RETENTION_EVERY = '1 hour';

/**
 * The Temporal schedule of retention, made at every worker start: created when missing, else brought to the
 * current settings. Temporal keeps one schedule per id, so workers starting at once cannot make two. The
 * days are the worker's settings (read by the activity), so the schedule holds none of them.
 */
export async function ensureRetentionSchedule(client: Client, options: { taskQueue: string }): Promise<void> {
  const scheduleId = retentionScheduleId(options.taskQueue);
  const spec: ScheduleSpec = { intervals: [{ every: RETENTION_EVERY }] };
  const action: ScheduleOptionsAction = {
    type: 'startWorkflow',
    // workflows/purge-expired-data.ts
    workflowType: 'purgeExpiredDataWorkflow',
    workflowId: scheduleId,
    taskQueue: options.taskQueue,
    args: [],
    // A run that finds no worker (the installation is down) ends rather than waits: the next one comes.
    workflowExecutionTimeout: '50 minutes',
  };
  const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' };
  try {
    await client.schedule.create({ scheduleId, spec, action, policies });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(scheduleId).update((previous) => ({ ...previous, spec, action, policies }));
  }
}
