import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleOptionsAction, type ScheduleSpec } from '@temporalio/client';

/** One schedule per task queue: installations (and test stacks) sharing a namespace keep theirs apart. */
export const dnsRecheckScheduleId = (taskQueue: string) => `dns-recheck-${taskQueue}`;

/**
 * How often the schedule runs: a quarter of the re-check interval (at least a minute), so a domain is
 * re-checked within 1.25 intervals of its last check. Each run checks only the domains that are due.
 */
export const scheduleEveryMinutes = (recheckMinutes: number) => Math.max(1, Math.floor(recheckMinutes / 4));

/**
 * The Temporal schedule of the periodic DNS re-check, made at every worker start: created when missing,
 * else brought to the current settings (another worker, or an earlier start, made it). Temporal keeps one
 * schedule per id, so workers starting at once cannot make two.
 */
export async function ensureDnsRecheckSchedule(client: Client, options: { taskQueue: string; recheckMinutes: number }): Promise<void> {
  const scheduleId = dnsRecheckScheduleId(options.taskQueue);
  const spec: ScheduleSpec = { intervals: [{ every: `${scheduleEveryMinutes(options.recheckMinutes)} minutes` }] };
  const action: ScheduleOptionsAction = {
    type: 'startWorkflow',
    // workflows/recheck-domains.ts
    workflowType: 'recheckDomainsWorkflow',
    workflowId: scheduleId,
    taskQueue: options.taskQueue,
    args: [],
    // A run that finds no worker (the installation is down) ends rather than waits: the next one comes.
    workflowExecutionTimeout: '30 minutes',
  };
  const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' };
  try {
    await client.schedule.create({ scheduleId, spec, action, policies });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(scheduleId).update((previous) => ({ ...previous, spec, action, policies }));
  }
}
