import {
  ScheduleAlreadyRunning,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleOptionsAction,
  type ScheduleSpec,
} from '@temporalio/client';

export interface PeriodicSchedule {
  scheduleId: string;
  /** A Temporal duration: '15 minutes', '1 hour'. */
  every: string;
  /** A workflow of workflows/ that takes no arguments. */
  workflowType: string;
  taskQueue: string;
  /** A run that finds no worker (the installation is down) ends after this rather than waits: the next one comes. */
  executionTimeout: string;
}

/**
 * A Temporal schedule of the service's periodic work, made at every worker start: created when missing, else
 * brought to the current settings (another worker, or an earlier start, made it). Temporal keeps one schedule
 * per id, so workers starting at once cannot make two; a run still going when the next is due skips it.
 */
export async function ensurePeriodicSchedule(client: Client, s: PeriodicSchedule): Promise<void> {
  const spec: ScheduleSpec = { intervals: [{ every: s.every }] };
  const action: ScheduleOptionsAction = {
    type: 'startWorkflow',
    workflowType: s.workflowType,
    workflowId: s.scheduleId,
    taskQueue: s.taskQueue,
    args: [],
    workflowExecutionTimeout: s.executionTimeout,
  };
  const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' };
  try {
    await client.schedule.create({ scheduleId: s.scheduleId, spec, action, policies });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(s.scheduleId).update((previous) => ({ ...previous, spec, action, policies }));
  }
}
