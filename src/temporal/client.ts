import { Client, Connection, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { batchJobWorkflow } from '../../workflows/batch-job.js';
import type { deliverEmailsWorkflow, SmtpRetry } from '../../workflows/deliver-emails.js';
import type { deliverWebhooksWorkflow } from '../../workflows/deliver-webhooks.js';
import type { scheduledSecondWorkflow } from '../../workflows/scheduled-email.js';
import type { Tracing } from '../telemetry/tracing.js';
import { ensureDnsRecheckSchedule } from './dns-recheck-schedule.js';
import { ensureRetentionSchedule } from './retention-schedule.js';
import { clientTracing } from './temporal-tracing.js';
// The SDK's unreachable-server errors answer 503 wherever a client is used (errors.ts).
import './temporal-unavailable.js';

/**
 * Starting the service's workflows. Workflow ids are business ids (delivery group, scheduled email, batch
 * job), so a repeated start is harmless: it answers false instead of starting a second one.
 */
export interface TemporalClient {
  startDeliveryGroup(groupId: string, emailIds: string[]): Promise<boolean>;
  /** `retryAt`: deliveries whose first attempt was made (and failed) and when their first retry is due. */
  startWebhookGroup(groupId: string, deliveryIds: string[], retryAt?: Record<string, number>): Promise<boolean>;
  /** Starts the workflow of the second `scheduledAt` falls in (one for every email due that second). */
  startScheduledSecond(scheduledAt: Date): Promise<boolean>;
  startBatchJob(jobId: string): Promise<boolean>;
  /** Creates, or brings up to date, the schedule of the periodic DNS re-check of verified domains. */
  ensureDnsRecheckSchedule(recheckMinutes: number): Promise<void>;
  /** Creates, or brings up to date, the hourly schedule of retention (the removal of expired data). */
  ensureRetentionSchedule(): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * How long before its second a scheduled second's workflow starts, to build and sign the second's messages
 * while nothing is due yet (workflows/scheduled-email.ts, job-activities.ts prepareScheduled): at the second
 * itself only firing, the SMTP hand-over and the bookkeeping are left. An API caller sees none of it: an
 * email is created only when it fires, and a scheduled email may be cancelled until then.
 */
const PREPARE_LEAD_MS = 5000;

/** How long /readyz waits for Temporal to answer. */
const PING_TIMEOUT_MS = 2000;
/**
 * How long a request waits to start a job's workflow. The job is committed first; if Temporal does not
 * answer in time the request is still answered and the sweep starts the workflow later.
 */
const START_TIMEOUT_MS = 3000;

/** How long a worker's start waits to create or update a schedule (DNS re-check, retention: two calls at most). */
const SCHEDULE_TIMEOUT_MS = 10_000;

async function once(start: () => Promise<unknown>): Promise<boolean> {
  try {
    await start();
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}

export async function connectTemporal(options: {
  address: string;
  namespace: string;
  taskQueue: string;
  smtpRetry: SmtpRetry;
  tracing?: Pick<Tracing, 'enabled'>;
}): Promise<TemporalClient> {
  // Lazy: a process starts whether or not Temporal answers yet (the API serves sends, which need only the
  // database, and /readyz says Temporal is down); calls connect, and reconnect, when made.
  const connection = Connection.lazy({ address: options.address });
  const client = new Client({
    connection,
    namespace: options.namespace,
    interceptors: clientTracing(options.tracing ?? { enabled: false }),
  });
  const taskQueue = options.taskQueue;
  // Seconds whose workflow this process started, until that second has passed: most schedules share a
  // second with others, and asking Temporal again for each would cost a refused start apiece.
  const startedSeconds = new Map<string, number>();
  const rememberStarted = (workflowId: string, from: number) => {
    if (startedSeconds.size > 100_000) startedSeconds.clear();
    startedSeconds.set(workflowId, from);
  };
  return {
    startDeliveryGroup: (groupId, emailIds) =>
      once(() =>
        client.workflow.start<typeof deliverEmailsWorkflow>('deliverEmailsWorkflow', {
          workflowId: groupId,
          taskQueue,
          args: [{ emailIds, retry: options.smtpRetry }],
          // A group's workflow completes only after its emails left the delivery queue, so a completed run
          // means the sweep read the group before it ended (it reads every stale group, then starts them
          // one by one): starting it again would only load every email again to find it settled. A run that
          // failed, timed out or was terminated left its emails queued, and is started again.
          workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
        }),
      ),
    startWebhookGroup: (groupId, deliveryIds, retryAt) =>
      once(() =>
        client.workflow.start<typeof deliverWebhooksWorkflow>('deliverWebhooksWorkflow', {
          workflowId: groupId,
          taskQueue,
          args: [{ deliveryIds, ...(retryAt ? { retryAt } : {}) }],
        }),
      ),
    startScheduledSecond: (scheduledAt) => {
      const from = Math.floor(scheduledAt.getTime() / 1000) * 1000;
      // The task queue is in the id: deployments that share a namespace (one queue each) must not take
      // each other's second for their own, or the second's start is refused and only the sweep fires it.
      const workflowId = `scheduled-${taskQueue}-${new Date(from).toISOString()}`;
      // Started already from this process: the running workflow will find every row of its second.
      if ((startedSeconds.get(workflowId) ?? 0) > Date.now()) return Promise.resolve(false);
      // A few seconds early, to build the second's messages before they are due (scheduled-email.ts).
      const delayMs = from - PREPARE_LEAD_MS - Date.now();
      return once(() =>
        connection.withDeadline(Date.now() + START_TIMEOUT_MS, () =>
          client.workflow.start<typeof scheduledSecondWorkflow>('scheduledSecondWorkflow', {
            workflowId,
            taskQueue,
            args: [{ from, prepare: true }],
            ...(delayMs > 0 ? { startDelay: delayMs } : {}),
          }),
        ),
      ).then((started) => {
        rememberStarted(workflowId, from);
        return started;
      });
    },
    startBatchJob: (jobId) =>
      once(() =>
        connection.withDeadline(Date.now() + START_TIMEOUT_MS, () =>
          client.workflow.start<typeof batchJobWorkflow>('batchJobWorkflow', {
            workflowId: jobId,
            taskQueue,
            args: [{ jobId, retry: options.smtpRetry }],
          }),
        ),
      ),
    ensureDnsRecheckSchedule: (recheckMinutes) =>
      connection.withDeadline(Date.now() + SCHEDULE_TIMEOUT_MS, () =>
        ensureDnsRecheckSchedule(client, { taskQueue, recheckMinutes }),
      ),
    ensureRetentionSchedule: () =>
      connection.withDeadline(Date.now() + SCHEDULE_TIMEOUT_MS, () => ensureRetentionSchedule(client, { taskQueue })),
    async ping() {
      // A bounded probe: without a deadline the client's retries hold an unreachable server's call ~20 s.
      await connection.withDeadline(Date.now() + PING_TIMEOUT_MS, () => connection.workflowService.getSystemInfo({}));
    },
    close: () => connection.close(),
  };
}
