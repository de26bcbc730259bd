import { Client, Connection, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type { batchJobWorkflow } from '../../workflows/batch-job.js';
import type { deliverEmailsWorkflow } from '../../workflows/deliver-emails.js';
import type { scheduledEmailWorkflow } from '../../workflows/scheduled-email.js';

/**
 * Starting the service's workflows. Workflow ids are business ids (delivery group, scheduled email, batch
 * job), so a repeated start is harmless: it answers false instead of starting a second one.
 */
export interface TemporalClient {
  client: Client;
  startDeliveryGroup(groupId: string, emailIds: string[]): Promise<boolean>;
  startScheduledEmail(scheduledId: string, scheduledAt: Date): Promise<boolean>;
  startBatchJob(jobId: string): Promise<boolean>;
  /** Ends a cancelled scheduled email's workflow early; one already gone is fine. */
  terminateScheduledEmail(scheduledId: string): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** How long /readyz waits for Temporal to answer. */
const PING_TIMEOUT_MS = 2000;
/**
 * How long a request waits to start a job's workflow. The job is committed first; if Temporal does not
 * answer in time the request is still answered and the sweep starts the workflow later.
 */
const START_TIMEOUT_MS = 3000;

async function once(start: () => Promise<unknown>): Promise<boolean> {
  try {
    await start();
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}

export async function connectTemporal(options: { address: string; namespace: string; taskQueue: string }): Promise<TemporalClient> {
  const connection = await Connection.connect({ address: options.address });
  const client = new Client({ connection, namespace: options.namespace });
  const taskQueue = options.taskQueue;
  return {
    client,
    startDeliveryGroup: (groupId, emailIds) =>
      once(() => client.workflow.start<typeof deliverEmailsWorkflow>('deliverEmailsWorkflow', { workflowId: groupId, taskQueue, args: [{ emailIds }] })),
    startScheduledEmail: (scheduledId, scheduledAt) => {
      const delayMs = scheduledAt.getTime() - Date.now();
      return once(() =>
        connection.withDeadline(Date.now() + START_TIMEOUT_MS, () =>
          client.workflow.start<typeof scheduledEmailWorkflow>('scheduledEmailWorkflow', {
            workflowId: scheduledId,
            taskQueue,
            args: [{ scheduledId }],
            ...(delayMs > 0 ? { startDelay: delayMs } : {}),
          })));
    },
    startBatchJob: (jobId) =>
      once(() =>
        connection.withDeadline(Date.now() + START_TIMEOUT_MS, () =>
          client.workflow.start<typeof batchJobWorkflow>('batchJobWorkflow', { workflowId: jobId, taskQueue, args: [{ jobId }] }))),
    async terminateScheduledEmail(scheduledId) {
      try {
        await client.workflow.getHandle(scheduledId).terminate('scheduled email cancelled');
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
    },
    async ping() {
      // A bounded probe: without a deadline the client's retries hold an unreachable server's call ~20 s.
      await connection.withDeadline(Date.now() + PING_TIMEOUT_MS, () => connection.workflowService.getSystemInfo({}));
    },
    close: () => connection.close(),
  };
}
