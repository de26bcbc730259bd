import type { BatchRepo } from '../db/index.js';
import type { ScheduledRepo } from '../db/index.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { JobStarters } from './job-starters.js';

const OVERDUE_MS = 5_000;
const OLDER_THAN_SECONDS = 15;
const PER_SWEEP = 500;

/**
 * Scheduled emails and batch jobs are committed first and their workflows started right after; a process
 * that dies in between leaves a job without a workflow. The sweep starts those under the same workflow id
 * (a repeated start is harmless), so no committed job is ever forgotten. It also fires any scheduled email
 * still waiting well after its time (a second's workflow that ran before a slow request's commit landed).
 */
export function createJobSweeper(deps: {
  starters: JobStarters;
  scheduled: ScheduledRepo;
  batches: BatchRepo;
  notifyQueued: () => void;
  logger: Logger;
  metrics?: Pick<Metrics, 'scheduledLateness'>;
}) {
  const onLateness = (seconds: number[]) => {
    for (const s of seconds) deps.metrics?.scheduledLateness.observe({ fired_by: 'sweep' }, s);
  };
  /** Answers how many jobs it started or fired. */
  async function sweep(): Promise<number> {
    let started = 0;
    for (const s of await deps.scheduled.unstarted(OLDER_THAN_SECONDS, PER_SWEEP)) {
      if (await deps.starters.startScheduled(s.id, s.scheduledAt)) started += 1;
    }
    for (const id of await deps.batches.unstarted(OLDER_THAN_SECONDS, PER_SWEEP)) {
      if (await deps.starters.startBatch(id)) started += 1;
    }
    if (started > 0) deps.logger.warn({ started }, 'started workflows of jobs left without one');
    const overdue = (
      await deps.scheduled.fireDue(new Date(0), new Date(Date.now() - OVERDUE_MS), () => newId('email'), { onLateness })
    ).length;
    if (overdue > 0) {
      deps.notifyQueued();
      deps.logger.warn({ fired: overdue }, 'fired scheduled emails found overdue');
    }
    return started + overdue;
  }

  return { sweep };
}
