import type { BatchRepo } from '../db/index.js';
import type { ScheduledRepo } from '../db/index.js';
import type { Logger } from '../logger.js';
import type { TemporalClient } from './client.js';
import type { StartRetrier } from './start-retrier.js';

/**
 * Starts a job's workflow and records that it did. The job is already committed, so a start that fails
 * (Temporal down) does not fail the caller: it is handed to the retrier, which tries again until Temporal
 * answers, and the starter answers false (true when started now).
 */
export function createJobStarters(deps: {
  temporal: TemporalClient;
  scheduled: ScheduledRepo;
  batches: BatchRepo;
  retrier: Pick<StartRetrier, 'retry'>;
  logger: Logger;
}) {
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
