import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import type { deliverWebhooksWorkflow } from '../../workflows/deliver-webhooks.js';
import { withStubWorker } from '../helpers/stub-worker.js';

/**
 * deliverWebhooksWorkflow with stub activities: how many attempts each delivery gets, with and without a
 * first attempt already made by the dispatcher (`retryAt`), and when the last failure discards it.
 */
function stubs(acknowledges: (deliveryId: string, call: number) => boolean) {
  const calls = {
    sendWebhook: [] as { deliveryId: string; notBefore?: number; at: number }[],
    discardWebhook: [] as string[],
  };
  return {
    calls,
    activities: {
      async sendWebhook(input: { deliveryId: string; notBefore?: number }) {
        calls.sendWebhook.push({ ...input, at: Date.now() });
        const n = calls.sendWebhook.filter((c) => c.deliveryId === input.deliveryId).length;
        if (!acknowledges(input.deliveryId, n))
          throw ApplicationFailure.retryable('HTTP 500', 'WebhookNotAcknowledged');
        return 'succeeded';
      },
      async discardWebhook({ deliveryId }: { deliveryId: string }) {
        calls.discardWebhook.push(deliveryId);
      },
    },
  };
}

const run = (activities: object, input: Parameters<typeof deliverWebhooksWorkflow>[0]) =>
  withStubWorker(activities, (client, taskQueue) =>
    client.workflow.execute<typeof deliverWebhooksWorkflow>('deliverWebhooksWorkflow', {
      taskQueue,
      workflowId: `wf-test-${Date.now()}-${Math.random().toString(36).slice(2)}`,
      args: [input],
    }),
  );

describe('deliverWebhooksWorkflow (stub activities)', () => {
  it("after the dispatcher's failed first attempt: 3 more attempts, the first with its notBefore, then the discard", async () => {
    const { activities, calls } = stubs((id) => id === 'whd_ok');
    const notBefore = Date.now() + 500;
    const tally = await run(activities, {
      deliveryIds: ['whd_ok', 'whd_bad'],
      retryAt: { whd_ok: notBefore, whd_bad: notBefore },
    });
    expect(tally).toEqual({ succeeded: 1, discarded: 1 });
    const bad = calls.sendWebhook.filter((c) => c.deliveryId === 'whd_bad');
    expect(bad).toHaveLength(3);
    expect(bad.every((c) => c.notBefore === notBefore)).toBe(true);
    // The retry policy's waits between them: 2 s, then 4 s (Temporal counts from the failure).
    expect(bad[1]!.at - bad[0]!.at).toBeGreaterThanOrEqual(2000);
    expect(bad[2]!.at - bad[1]!.at).toBeGreaterThanOrEqual(4000);
    expect(calls.discardWebhook).toEqual(['whd_bad']);
  }, 60_000);

  it('without a first attempt made: the whole schedule of 4 attempts', async () => {
    const { activities, calls } = stubs(() => false);
    expect(await run(activities, { deliveryIds: ['whd_x'] })).toEqual({ succeeded: 0, discarded: 1 });
    expect(calls.sendWebhook.map((c) => c.notBefore)).toEqual([undefined, undefined, undefined, undefined]);
  }, 60_000);
});
