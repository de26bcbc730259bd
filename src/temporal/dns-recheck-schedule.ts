import type { Client } from '@temporalio/client';
import { ensurePeriodicSchedule } from './periodic-schedule.js';

/** One schedule per task queue: installations (and test stacks) sharing a namespace keep theirs apart. */
export const dnsRecheckScheduleId = (taskQueue: string) => `dns-recheck-${taskQueue}`;

/**
 * How often the schedule runs: a quarter of the re-check interval (at least a minute), so a domain is
 * re-checked within 1.25 intervals of its last check. Each run checks only the domains that are due.
 */
export const scheduleEveryMinutes = (recheckMinutes: number) => Math.max(1, Math.floor(recheckMinutes / 4));

/** The Temporal schedule of the periodic DNS re-check (periodic-schedule.ts). */
export async function ensureDnsRecheckSchedule(
  client: Client,
  options: { taskQueue: string; recheckMinutes: number },
): Promise<void> {
  await ensurePeriodicSchedule(client, {
    scheduleId: dnsRecheckScheduleId(options.taskQueue),
    every: `${scheduleEveryMinutes(options.recheckMinutes)} minutes`,
    taskQueue: options.taskQueue,
    workflowType: 'recheckDomainsWorkflow', // workflows/recheck-domains.ts
    executionTimeout: '30 minutes',
  });
}
