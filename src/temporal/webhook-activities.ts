import { ApplicationFailure, Context } from '@temporalio/activity';
import type { DisableThreshold, WebhookDeliveriesRepo } from '../db/repos/webhook-deliveries-repo.js';
import { webhookEnvelope } from '../domain/events.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { statusClass } from '../metrics/delivery-metrics.js';
import type { PostResult } from '../webhooks/post.js';
import { webhookHeaders } from '../webhooks/request.js';

export interface WebhookActivityDeps {
  webhookDeliveries: WebhookDeliveriesRepo;
  /** One HTTP POST with the address guard and the 10 s limit (webhooks/post.ts). */
  post: (url: string, body: string, headers: Record<string, string>) => Promise<PostResult>;
  logger: Logger;
  /** When an endpoint that keeps failing is disabled (config: webhookDisableAfterDiscards / Hours). */
  disableThreshold: DisableThreshold;
  metrics?: Pick<Metrics, 'webhookAttempts' | 'webhookDiscards' | 'webhookPostDuration' | 'webhookEventLatency'>;
}

/** An attempt in the metrics: its outcome and answer, its duration, and for a delivered event how long it took since the event. */
function countAttempt(metrics: WebhookActivityDeps['metrics'], result: PostResult, ok: boolean, eventAt: Date): void {
  if (!metrics) return;
  const status_class = statusClass(result.statusCode);
  // The workflow's retry policy says whether another attempt follows a failed one (an unknown one counts as the last).
  const { attempt, retryPolicy } = Context.current().info;
  const outcome = ok ? 'delivered' : attempt < (retryPolicy?.maximumAttempts ?? attempt) ? 'retrying' : 'failed';
  metrics.webhookAttempts.inc({ outcome, status_class });
  metrics.webhookPostDuration.observe({ status_class }, result.latencyMs / 1000);
  if (ok) metrics.webhookEventLatency.observe(Math.max(0, Date.now() - eventAt.getTime()) / 1000);
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
      if (!d.webhook || d.webhook.disabled) {
        // Disabled since the event was queued (later events of a disabled webhook are discarded at fan-out).
        const reason = d.webhook ? 'webhook_disabled' : 'webhook_deleted';
        await deps.webhookDeliveries.discard(d.id, reason);
        deps.metrics?.webhookDiscards.inc({ reason });
        return 'skipped';
      }
      const attempt = await deps.webhookDeliveries.beginAttempt(d.id);
      if (attempt === undefined) return 'skipped';
      // The body is the same on every attempt (the event's own time and data); only the signature's
      // timestamp is new, so receivers can both dedupe and refuse replays.
      const body = JSON.stringify(webhookEnvelope(d.event.type, d.event.at, d.email, d.event.data, d.event.id));
      const startedAt = new Date();
      const result = await deps.post(d.webhook.url, body, webhookHeaders(d.webhook.secrets, d.event.type, body, d.id, startedAt));
      const ok = result.statusCode >= 200 && result.statusCode < 300;
      await deps.webhookDeliveries.recordAttempt(d.id, {
        attempt, startedAt, statusCode: result.statusCode, latencyMs: result.latencyMs, responseExcerpt: result.excerpt,
        error: ok ? '' : result.error ?? `HTTP ${result.statusCode}`,
      }, ok);
      countAttempt(deps.metrics, result, ok, d.event.at);
      if (!ok) throw ApplicationFailure.retryable(result.error ?? `receiver answered HTTP ${result.statusCode}`, 'WebhookNotAcknowledged');
      return 'succeeded';
    },

    /**
     * The retry budget is spent: the event is discarded for this webhook (an operator may send it again).
     * Past the threshold this disables the webhook, which the operator is told of by a warning.
     */
    async discardWebhook(input: { deliveryId: string }): Promise<void> {
      const { disabledWebhook } = await deps.webhookDeliveries.discard(input.deliveryId, 'retries_exhausted', deps.disableThreshold);
      deps.metrics?.webhookDiscards.inc({ reason: 'retries_exhausted' });
      deps.logger.info({ deliveryId: input.deliveryId }, 'webhook delivery discarded after its last attempt');
      if (disabledWebhook) {
        deps.logger.warn({ webhookId: disabledWebhook.id, reason: disabledWebhook.reason },
          'webhook disabled: its deliveries keep failing; new events are discarded until an operator enables it (POST /v1/mail/admin/webhooks/:id/enable)');
      }
    },
  };
}
export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
