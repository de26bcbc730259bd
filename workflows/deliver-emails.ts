import { proxyActivities, sleep } from '@temporalio/workflow';
import type { DeliveryActivities } from '../src/temporal/delivery-activities.js';

/**
 * Delivers a group of accepted emails: one workflow for many emails keeps the cost per email on Temporal
 * low (DESIGN.md, "Temporal"). The content never travels through Temporal, only ids.
 *
 * Retry budget for a temporary SMTP failure (4xx, connection, timeout): the first try, then 12 more,
 * 10 s apart at first and doubling up to an hour (about 3.5 hours in all); then the email is bounced.
 */
const { deliverEmails } = proxyActivities<DeliveryActivities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '15 seconds',
  // Failures here are the service's own (database down, worker killed): retry them without limit.
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

export const SMTP_RETRY = { firstDelay: '10 seconds', initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '1 hour', maximumAttempts: 12 } as const;

const { retryEmail, giveUpEmail } = proxyActivities<DeliveryActivities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '15 seconds',
  retry: {
    initialInterval: SMTP_RETRY.initialInterval,
    backoffCoefficient: SMTP_RETRY.backoffCoefficient,
    maximumInterval: SMTP_RETRY.maximumInterval,
    maximumAttempts: SMTP_RETRY.maximumAttempts,
  },
});

export interface DeliverEmailsInput {
  emailIds: string[];
}

export async function deliverEmailsWorkflow(input: DeliverEmailsInput): Promise<{ sent: number; bounced: number; retried: number }> {
  const first = await deliverEmails({ emailIds: input.emailIds });
  if (first.retry.length === 0) return { sent: first.sent, bounced: first.bounced, retried: 0 };
  await sleep(SMTP_RETRY.firstDelay);
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
