import type { BatchRepo } from '../db/repos/batch-repo.js';
import type { ScheduledRepo } from '../db/repos/scheduled-repo.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import type { TemporalClient } from './client.js';
import type { StartRetrier } from './start-retrier.js';

/**
 * Scheduled emails and batch jobs are committed first and their workflows started right after; a process
 * that dies in between leaves a job without a workflow. The sweep starts those under the same workflow id
 * (a repeated start is harmless), so no committed job is ever forgotten. It also fires any scheduled email
 * still waiting well after its time (a second's workflow that ran before a slow request's commit landed).
 */
const OVERDUE_MS = 5_000;
const SWEEP_MS = 15_000;
const OLDER_THAN_SECONDS = 15;
const PER_SWEEP = 500;

/**
 * Starts a job's workflow and records that it did. A start that fails (Temporal down) is handed to the
 * retrier, which keeps trying in the background, and the error is still thrown to the caller.
 */
export function createJobStarters(deps: {
  temporal: TemporalClient;
  scheduled: ScheduledRepo;
  batches: BatchRepo;
  retrier: Pick<StartRetrier, 'retry'>;
  logger: Logger;
}) {
  /**
   * Starts a job's workflow; when Temporal does not answer, hands the start to the retrier (which tries again
   * until it does) instead of failing the caller, whose job is already committed. True when started now.
   */
  const withRetry = async (key: string, start: () => Promise<void>): Promise<boolean> => {
    try {
      await start();
      return true;
    } catch (err) {
      deps.logger.warn({ err, job: key }, 'workflow start failed; retrying in the background');
      deps.retrier.retry(key, start);
      return false;
    }
  };
  return {
    startScheduled: (id: string, scheduledAt: Date): Promise<boolean> =>
      withRetry(id, async () => {
        await deps.temporal.startScheduledSecond(scheduledAt);
        await deps.scheduled.markWorkflowStarted(id);
      }),
    startBatch: (jobId: string): Promise<boolean> =>
      withRetry(jobId, async () => {
        await deps.temporal.startBatchJob(jobId);
        await deps.batches.markWorkflowStarted(jobId);
      }),
  };
}
export type JobStarters = ReturnType<typeof createJobStarters>;

export function createJobSweeper(deps: {
  starters: JobStarters;
  scheduled: ScheduledRepo;
  batches: BatchRepo;
  /** Forgets Idempotency-Keys past their 24 hours (a reused key is answered afresh either way). */
  purgeIdempotencyKeys: () => Promise<number>;
  /** Lets the health policy move accounts that need no new event to move (recovery from review). */
  judgeAccountsInReview: () => Promise<void>;
  notifyQueued: () => void;
  logger: Logger;
}) {
  let timer: NodeJS.Timeout | undefined;

  async function sweep(): Promise<number> {
    let started = 0;
    for (const s of await deps.scheduled.unstarted(OLDER_THAN_SECONDS, PER_SWEEP)) {
      if (await deps.starters.startScheduled(s.id, s.scheduledAt)) started += 1;
    }
    for (const id of await deps.batches.unstarted(OLDER_THAN_SECONDS, PER_SWEEP)) {
      if (await deps.starters.startBatch(id)) started += 1;
    }
    if (started > 0) deps.logger.warn({ started }, 'started workflows of jobs left without one');
    const overdue = await deps.scheduled.fireDue(new Date(0), new Date(Date.now() - OVERDUE_MS), () => newId('email'));
    if (overdue > 0) {
      deps.notifyQueued();
      deps.logger.warn({ fired: overdue }, 'fired scheduled emails found overdue');
    }
    await deps.purgeIdempotencyKeys();
    await deps.judgeAccountsInReview();
    return started + overdue;
  }

  return {
    sweep,
    start(): void {
      timer = setInterval(() => {
        sweep().catch((err: unknown) => deps.logger.warn({ err }, 'job sweep failed'));
      }, SWEEP_MS);
      timer.unref();
    },
    stop(): void {
      clearInterval(timer);
    },
  };
}
