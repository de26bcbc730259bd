import { ApplicationFailure } from '@temporalio/activity';
import type { WebhookDeliveriesRepo } from '../db/repos/webhook-deliveries-repo.js';
import { webhookEnvelope } from '../domain/events.js';
import type { Logger } from '../logger.js';
import type { PostResult } from '../webhooks/post.js';
import { webhookHeaders } from '../webhooks/request.js';

export interface WebhookActivityDeps {
  webhookDeliveries: WebhookDeliveriesRepo;
  /** One HTTP POST with the address guard and the 10 s limit (webhooks/post.ts). */
  post: (url: string, body: string, headers: Record<string, string>) => Promise<PostResult>;
  logger: Logger;
}

/**
 * Webhook delivery: one activity execution is one attempt, and the retry policy of the workflow
 * (1 s, 2 s, 4 s, 4 attempts in all) is the schedule. Every attempt is recorded before it is judged.
 */
export function createWebhookActivities(deps: WebhookActivityDeps) {
  return {
    /** POSTs the event to its webhook; throws (to be retried) unless the receiver answered 2xx. */
    async sendWebhook(input: { deliveryId: string }): Promise<'succeeded' | 'skipped'> {
      const d = await deps.webhookDeliveries.loadForSending(input.deliveryId);
      if (!d || d.status !== 'pending') return 'skipped';
      if (!d.webhook) {
        await deps.webhookDeliveries.discard(d.id);
        return 'skipped';
      }
      const attempt = await deps.webhookDeliveries.beginAttempt(d.id);
      if (attempt === undefined) return 'skipped';
      // The body is the same on every attempt (the event's own time and data); only the signature's
      // timestamp is new, so receivers can both dedupe and refuse replays.
      const body = JSON.stringify(webhookEnvelope(d.event.type, d.event.at, d.email, d.event.data, d.event.id));
      const startedAt = new Date();
      const result = await deps.post(d.webhook.url, body, webhookHeaders(d.webhook.secret, d.event.type, body, d.id, startedAt));
      const ok = result.statusCode >= 200 && result.statusCode < 300;
      await deps.webhookDeliveries.recordAttempt(d.id, {
        attempt, startedAt, statusCode: result.statusCode, latencyMs: result.latencyMs, responseExcerpt: result.excerpt,
        error: ok ? '' : result.error ?? `HTTP ${result.statusCode}`,
      }, ok);
      if (!ok) throw ApplicationFailure.retryable(result.error ?? `receiver answered HTTP ${result.statusCode}`, 'WebhookNotAcknowledged');
      return 'succeeded';
    },

    /** The retry budget is spent: the event is discarded for this webhook (an operator may send it again). */
    async discardWebhook(input: { deliveryId: string }): Promise<void> {
      await deps.webhookDeliveries.discard(input.deliveryId);
      deps.logger.info({ deliveryId: input.deliveryId }, 'webhook delivery discarded after its last attempt');
    },
  };
}
export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
