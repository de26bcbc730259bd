import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import type { DeliverEmailsResult } from '../../src/delivery/delivery-activities.js';
import type { SendOutcome } from '../../src/delivery/email-sender.js';
import type { deliverEmailsWorkflow } from '../../workflows/deliver-emails.js';
import { withStubWorker } from '../helpers/stub-worker.js';

/**
 * deliverEmailsWorkflow with stub activities: what the workflow decides (who is retried, when one is given
 * up, the tally) without PostgreSQL or SMTP behind it.
 */

/** Activities that answer as told and record every call. */
function stubs(first: DeliverEmailsResult, retryOutcome: (emailId: string) => SendOutcome) {
  const calls = { deliverEmails: [] as string[][], retryEmail: [] as string[], giveUpEmail: [] as string[] };
  return {
    calls,
    activities: {
      async deliverEmails({ emailIds }: { emailIds: string[] }) {
        calls.deliverEmails.push(emailIds);
        return first;
      },
      async retryEmail({ emailId }: { emailId: string }) {
        calls.retryEmail.push(emailId);
        if (retryOutcome(emailId) === 'soft') throw ApplicationFailure.retryable('452 still full', 'SoftBounce');
        return retryOutcome(emailId);
      },
      async giveUpEmail({ emailId }: { emailId: string }) {
        calls.giveUpEmail.push(emailId);
      },
    },
  };
}

const run = (activities: object, input: Parameters<typeof deliverEmailsWorkflow>[0]) =>
  withStubWorker(activities, (client, taskQueue) =>
    client.workflow.execute<typeof deliverEmailsWorkflow>('deliverEmailsWorkflow', {
      taskQueue,
      workflowId: `wf-test-${Date.now()}-${Math.random().toString(36).slice(2)}`,
      args: [input],
    }),
  );

describe('deliverEmailsWorkflow (stub activities)', () => {
  it('sends the group once and retries nothing when every email is final', async () => {
    const { activities, calls } = stubs({ sent: 2, bounced: 1, retry: [] }, () => 'sent');
    expect(await run(activities, { emailIds: ['em_a', 'em_b', 'em_c'] })).toEqual({ sent: 2, bounced: 1, retried: 0 });
    expect(calls).toEqual({ deliverEmails: [['em_a', 'em_b', 'em_c']], retryEmail: [], giveUpEmail: [] });
  });

  it('retries each temporary failure on its own and gives up on the one whose budget runs out', async () => {
    const { activities, calls } = stubs({ sent: 1, bounced: 0, retry: ['em_b', 'em_c'] }, (id) =>
      id === 'em_b' ? 'sent' : 'soft',
    );
    const tally = await run(activities, {
      emailIds: ['em_a', 'em_b', 'em_c'],
      retry: { retries: 2, firstDelaySeconds: 1 },
    });
    expect(tally).toEqual({ sent: 2, bounced: 1, retried: 2 });
    expect(calls.retryEmail.filter((id) => id === 'em_b')).toHaveLength(1);
    expect(calls.retryEmail.filter((id) => id === 'em_c')).toHaveLength(2);
    expect(calls.giveUpEmail).toEqual(['em_c']);
  }, 60_000);

  it('with a budget of no retries (MAILER_SMTP_RETRY_ATTEMPTS=0) gives up at once on every temporary failure', async () => {
    const { activities, calls } = stubs({ sent: 1, bounced: 0, retry: ['em_b'] }, () => 'soft');
    const tally = await run(activities, { emailIds: ['em_a', 'em_b'], retry: { retries: 0, firstDelaySeconds: 1 } });
    expect(tally).toEqual({ sent: 1, bounced: 1, retried: 1 });
    expect(calls.retryEmail).toEqual([]);
    expect(calls.giveUpEmail).toEqual(['em_b']);
  }, 60_000);
});
