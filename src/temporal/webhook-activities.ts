import { ApplicationFailure } from '@temporalio/activity';
import type { DeliveryToSend, DisableThreshold, WebhookDeliveriesRepo } from '../db/repos/webhook-deliveries-repo.js';
import { webhookEnvelope } from '../domain/events.js';
import type { Logger } from '../logger.js';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_SERVER_ADDRESS } from '@opentelemetry/semantic-conventions';
import { withLogFields } from '../telemetry/log-context.js';
import { inSpan, spanLinkTo } from '../telemetry/spans.js';
import type { PostResult } from '../webhooks/post.js';
import { webhookHeaders } from '../webhooks/request.js';

export interface WebhookActivityDeps {
  webhookDeliveries: WebhookDeliveriesRepo;
  /** One HTTP POST with the address guard and the 10 s limit (webhooks/post.ts). */
  post: (url: string, body: string, headers: Record<string, string>) => Promise<PostResult>;
  logger: Logger;
  /** When an endpoint that keeps failing is disabled (config: webhookDisableAfterDiscards / Hours). */
  disableThreshold: DisableThreshold;
}

/**
 * Webhook delivery: one activity execution is one attempt, and the retry policy of the workflow
 * (1 s, 2 s, 4 s, 4 attempts in all) is the schedule. Every attempt is recorded before it is judged.
 */
export function createWebhookActivities(deps: WebhookActivityDeps) {
  /** One attempt of a pending delivery: recorded before it is judged. */
  async function attempt(d: DeliveryToSend): Promise<'succeeded' | 'skipped'> {
    if (!d.webhook || d.webhook.disabled) {
      // Disabled since the event was queued (later events of a disabled webhook are discarded at fan-out).
      await deps.webhookDeliveries.discard(d.id, d.webhook ? 'webhook_disabled' : 'webhook_deleted');
      return 'skipped';
    }
    const attempt = await deps.webhookDeliveries.beginAttempt(d.id);
    if (attempt === undefined) return 'skipped';
    // The body is the same on every attempt (the event's own time and data); only the signature's
    // timestamp is new, so receivers can both dedupe and refuse replays.
    const body = JSON.stringify(webhookEnvelope(d.event.type, d.event.at, d.email, d.event.data, d.event.id));
    const startedAt = new Date();
    const { url, secrets } = d.webhook;
    const result = await tracedPost(d, attempt, () => deps.post(url, body, webhookHeaders(secrets, d.event.type, body, d.id, startedAt)));
    const ok = result.statusCode >= 200 && result.statusCode < 300;
    await deps.webhookDeliveries.recordAttempt(d.id, {
      attempt, startedAt, statusCode: result.statusCode, latencyMs: result.latencyMs, responseExcerpt: result.excerpt,
      error: ok ? '' : result.error ?? `HTTP ${result.statusCode}`,
    }, ok);
    if (!ok) throw ApplicationFailure.retryable(result.error ?? `receiver answered HTTP ${result.statusCode}`, 'WebhookNotAcknowledged');
    return 'succeeded';
  }

  return {
    /** POSTs the event to its webhook; throws (to be retried) unless the receiver answered 2xx. */
    async sendWebhook(input: { deliveryId: string }): Promise<'succeeded' | 'skipped'> {
      const d = await deps.webhookDeliveries.loadForSending(input.deliveryId);
      if (!d || d.status !== 'pending') return 'skipped';
      // Every log line of the attempt names the delivery and the email the event is about.
      return withLogFields({ webhookDeliveryId: d.id, emailId: d.email.id }, () => attempt(d));
    },

    /**
     * The retry budget is spent: the event is discarded for this webhook (an operator may send it again).
     * Past the threshold this disables the webhook, which the operator is told of by a warning.
     */
    async discardWebhook(input: { deliveryId: string }): Promise<void> {
      const { disabledWebhook } = await deps.webhookDeliveries.discard(input.deliveryId, 'retries_exhausted', deps.disableThreshold);
      deps.logger.info({ deliveryId: input.deliveryId }, 'webhook delivery discarded after its last attempt');
      if (disabledWebhook) {
        deps.logger.warn({ webhookId: disabledWebhook.id, reason: disabledWebhook.reason },
          'webhook disabled: its deliveries keep failing; new events are discarded until an operator enables it (POST /v1/mail/admin/webhooks/:id/enable)');
      }
    },
  };
}
export type WebhookActivities = ReturnType<typeof createWebhookActivities>;

/**
 * The POST as a client span under the activity's: the receiver's host (never the URL's path or query, which
 * may hold a secret) and its status. Linked to the span the email was accepted under, as the event is a
 * consequence of that email rather than part of its request.
 */
function tracedPost(d: DeliveryToSend, attempt: number, post: () => Promise<PostResult>): Promise<PostResult> {
  const links = spanLinkTo(d.email.traceparent);
  return inSpan('webhook POST', {
    kind: SpanKind.CLIENT,
    links,
    attributes: {
      [ATTR_HTTP_REQUEST_METHOD]: 'POST', [ATTR_SERVER_ADDRESS]: hostOf(d.webhook?.url ?? ''), 'mailer.webhook.delivery_id': d.id,
      'mailer.webhook.event': d.event.type, 'mailer.email.id': d.email.id, 'mailer.webhook.attempt': attempt,
    },
  }, async (span) => {
    const result = await post();
    span?.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, result.statusCode);
    if (span && (result.statusCode < 200 || result.statusCode >= 300)) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: result.error ?? `HTTP ${result.statusCode}` });
    }
    return result;
  });
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}
