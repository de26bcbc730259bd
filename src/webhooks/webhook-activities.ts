import { ApplicationFailure, Context } from '@temporalio/activity';
import type { DisableThreshold } from '../domain/entities/webhooks.js';
import type { WebhookDeliveriesRepo } from '../db/index.js';
import type { Logger } from '../logger.js';
import type { PostResult } from './post.js';
import { createWebhookAttempt, type WebhookAttemptDeps } from './webhook-attempt.js';

export interface WebhookActivityDeps {
  webhookDeliveries: WebhookDeliveriesRepo;
  /** One HTTP POST with the address guard and the 10 s limit (webhooks/post.ts). */
  post: (url: string, body: string, headers: Record<string, string>) => Promise<PostResult>;
  logger: Logger;
  /** When an endpoint that keeps failing is disabled (config: webhookDisableAfterDiscards / Hours). */
  disableThreshold: DisableThreshold;
  metrics?: WebhookAttemptDeps['metrics'];
}

/**
 * Webhook delivery: one activity execution is one attempt, and the retry policy of the workflow
 * (1 s, 2 s, 4 s, 4 attempts in all) is the schedule. Every attempt is recorded before it is judged.
 * The first attempt is usually made by the dispatcher itself (webhook-dispatcher.ts): a workflow then
 * runs only the retries of the deliveries it could not make, its first one not before `notBefore`.
 */
export function createWebhookActivities(deps: WebhookActivityDeps) {
  const attempts = createWebhookAttempt(deps);
  return {
    /** POSTs the event to its webhook; throws (to be retried) unless the receiver answered 2xx. */
    async sendWebhook(input: { deliveryId: string; notBefore?: number }): Promise<'succeeded' | 'skipped'> {
      // A retry after the dispatcher's attempt: its 1 s is counted here, in this process, from that failure.
      const wait = (input.notBefore ?? 0) - Date.now();
      if (wait > 0) await Context.current().sleep(wait);
      const d = await deps.webhookDeliveries.loadForSending(input.deliveryId);
      if (!d || !(await attempts.admit(d))) return 'skipped';
      const attempt = await deps.webhookDeliveries.beginAttempt(d.id);
      if (attempt === undefined) return 'skipped';
      const outcome = await attempts.send(d, attempt);
      if (outcome.result === 'failed') throw ApplicationFailure.retryable(outcome.error, 'WebhookNotAcknowledged');
      return 'succeeded';
    },

    /**
     * The retry budget is spent: the event is discarded for this webhook (an operator may send it again).
     * Past the threshold this disables the webhook, which the operator is told of by a warning.
     */
    async discardWebhook(input: { deliveryId: string }): Promise<void> {
      const { disabledWebhook } = await deps.webhookDeliveries.discard(
        input.deliveryId,
        'retries_exhausted',
        deps.disableThreshold,
      );
      deps.metrics?.webhookDiscards.inc({ reason: 'retries_exhausted' });
      deps.logger.info({ deliveryId: input.deliveryId }, 'webhook delivery discarded after its last attempt');
      if (disabledWebhook) {
        deps.logger.warn(
          { webhookId: disabledWebhook.id, reason: disabledWebhook.reason },
          'webhook disabled: its deliveries keep failing; new events are discarded until an operator enables it (POST /v1/mail/admin/webhooks/:id/enable)',
        );
      }
    },
  };
}
