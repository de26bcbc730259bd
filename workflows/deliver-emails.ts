import { proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../src/temporal/activities.js';

/**
 * Delivering accepted emails, for every kind of send. The content never travels through Temporal, only ids.
 *
 * Retry budget for a temporary SMTP failure (4xx, connection, timeout), by default: the first try, then 12
 * more, 10 s apart at first and doubling up to an hour (about 3.5 hours in all); then the email is bounced
 * (Transient). Operators set the number and the first wait (MAILER_SMTP_RETRY_*); whoever starts a
 * delivery workflow passes them in, so a running workflow keeps the budget it started with.
 */
const { deliverEmails } = proxyActivities<Activities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '15 seconds',
  // Failures here are the service's own (database down, worker killed): retry them without limit.
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/** The retry budget of temporary SMTP failures: how many retries, and the wait before the first (it doubles). */
export interface SmtpRetry {
  retries: number;
  firstDelaySeconds: number;
}

export const DEFAULT_SMTP_RETRY: SmtpRetry = { retries: 12, firstDelaySeconds: 10 };

function retryActivities(budget: SmtpRetry) {
  return proxyActivities<Activities>({
    startToCloseTimeout: '5 minutes',
    heartbeatTimeout: '15 seconds',
    retry: {
      initialInterval: `${budget.firstDelaySeconds} seconds`,
      backoffCoefficient: 2,
      maximumInterval: '1 hour',
      maximumAttempts: budget.retries,
    },
  });
}

export interface DeliveryTally {
  sent: number;
  bounced: number;
  retried: number;
}

/**
 * Recording a give-up is bookkeeping, not a send: it is retried (Temporal's default policy) until it lands,
 * whatever the SMTP budget, which may be 0 retries (and Temporal refuses a maximumAttempts of 0).
 */
const { giveUpEmail } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '15 seconds',
});

/** Sends every email once, then retries the temporary failures each on its own schedule until final. */
export async function deliverAll(emailIds: string[], budget: SmtpRetry = DEFAULT_SMTP_RETRY): Promise<DeliveryTally> {
  if (emailIds.length === 0) return { sent: 0, bounced: 0, retried: 0 };
  const first = await deliverEmails({ emailIds });
  if (first.retry.length === 0) return { sent: first.sent, bounced: first.bounced, retried: 0 };
  if (budget.retries === 0) {
    await Promise.all(first.retry.map((emailId) => giveUpEmail({ emailId })));
    return { sent: first.sent, bounced: first.bounced + first.retry.length, retried: first.retry.length };
  }
  const { retryEmail } = retryActivities(budget);
  await sleep(`${budget.firstDelaySeconds} seconds`);
  const outcomes = await Promise.all(
    first.retry.map((emailId) =>
      retryEmail({ emailId }).catch(async () => {
        await giveUpEmail({ emailId });
        return 'bounced' as const;
      }),
    ),
  );
  return {
    sent: first.sent + outcomes.filter((o) => o === 'sent').length,
    bounced: first.bounced + outcomes.filter((o) => o === 'bounced').length,
    retried: first.retry.length,
  };
}

export interface DeliverEmailsInput {
  emailIds: string[];
  /** Absent in workflows started before the budget was configurable. */
  retry?: SmtpRetry;
}

/** A group of direct sends drained from the delivery queue: one workflow for many emails. */
export async function deliverEmailsWorkflow(input: DeliverEmailsInput): Promise<DeliveryTally> {
  return deliverAll(input.emailIds, input.retry);
}
