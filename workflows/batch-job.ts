import { proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../src/temporal/activities.js';
import { deliverAll, type SmtpRetry } from './deliver-emails.js';

// Short database statements: local activities, inside the workflow task.
const { beginBatch, finishBatch } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/**
 * One batch job (workflow id = job id): pending → processing → completed or failed. Counters move in
 * PostgreSQL as each email's outcome is recorded, so GET /emails/batch/:id is one read.
 */
export async function batchJobWorkflow(input: { jobId: string; retry?: SmtpRetry }): Promise<string> {
  const emailIds = await beginBatch({ jobId: input.jobId });
  await deliverAll(emailIds, input.retry);
  return (await finishBatch({ jobId: input.jobId })) ?? 'unchanged';
}
