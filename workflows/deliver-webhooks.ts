import { proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../src/temporal/activities.js';

/**
 * Webhook delivery is a retry policy, not a loop (spec: Delivery rules): the first attempt, then retries
 * after 1 s, 2 s and 4 s; each attempt may take the receiver's 10 s plus a margin. Then the event is discarded.
 *
 * Attempts are local activities: they run in the worker that runs the workflow, with the retry timers kept
 * there, so a webhook costs the Temporal server no activity task of its own (regular activities queued behind
 * email deliveries for their slots: docs/benchmark.md, "Figures behind the code's choices").
 * A worker that dies mid-attempt loses its workflow task; the next worker replays it and tries again,
 * which the spec allows (an event may arrive more than once). The waits between attempts are kept in the
 * worker too (under a minute: the SDK's local retry threshold), where they are kept closer to their interval
 * under send load than server timers (same table). The price is a workflow task held open while a receiver
 * keeps failing, which the SDK logs as a workflow task over 5 s.
 */
export const WEBHOOK_RETRY = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '4 seconds',
  maximumAttempts: 4,
} as const;

const { sendWebhook } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '15 seconds',
  retry: WEBHOOK_RETRY,
});

/**
 * The same schedule once the dispatcher made the first attempt (webhook-dispatcher.ts): 3 attempts left,
 * the first 1 s after that failure (the activity waits for `notBefore`), then 2 s, then 4 s.
 */
export const WEBHOOK_RETRY_AFTER_FIRST = {
  initialInterval: '2 seconds',
  backoffCoefficient: 2,
  maximumInterval: '4 seconds',
  maximumAttempts: 3,
} as const;

const { sendWebhook: retryWebhook } = proxyLocalActivities<Activities>({
  // The wait for notBefore (1 s at most) is part of the first execution.
  startToCloseTimeout: '16 seconds',
  retry: WEBHOOK_RETRY_AFTER_FIRST,
});

// Recording the discard is the service's own write: retried until it lands.
const { discardWebhook } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

export interface DeliverWebhooksInput {
  deliveryIds: string[];
  /**
   * Deliveries whose first attempt the dispatcher made and that failed: when (epoch ms) their first retry
   * is due. The others get the whole schedule, from their first attempt.
   */
  retryAt?: Record<string, number>;
}

/** A group of webhook deliveries drained from their queue: each on its own retry schedule, all at once. */
export async function deliverWebhooksWorkflow(
  input: DeliverWebhooksInput,
): Promise<{ succeeded: number; discarded: number }> {
  const attempt = (deliveryId: string) => {
    const notBefore = input.retryAt?.[deliveryId];
    return notBefore === undefined ? sendWebhook({ deliveryId }) : retryWebhook({ deliveryId, notBefore });
  };
  const outcomes = await Promise.all(
    input.deliveryIds.map((deliveryId) =>
      attempt(deliveryId).then(
        () => 'succeeded' as const,
        async () => {
          await discardWebhook({ deliveryId });
          return 'discarded' as const;
        },
      ),
    ),
  );
  return {
    succeeded: outcomes.filter((o) => o === 'succeeded').length,
    discarded: outcomes.filter((o) => o === 'discarded').length,
  };
}
