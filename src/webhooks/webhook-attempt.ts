import type { DeliveryToSend } from '../domain/entities/webhooks.js';
import type { WebhookDeliveriesRepo } from '../db/index.js';
import { webhookEnvelope } from '../domain/events.js';
import type { Metrics } from '../metrics.js';
import { statusClass } from '../metrics/delivery-metrics.js';
import { withLogFields } from '../telemetry/log-context.js';
import type { PostResult } from './post.js';
import { webhookHeaders } from './request.js';
import { tracedPost } from './webhook-post-span.js';

export interface WebhookAttemptDeps {
  webhookDeliveries: Pick<WebhookDeliveriesRepo, 'discard' | 'recordAttempt'>;
  /** One HTTP POST with the address guard and the 10 s limit (webhooks/post.ts). */
  post: (url: string, body: string, headers: Record<string, string>) => Promise<PostResult>;
  metrics?: Pick<Metrics, 'webhookAttempts' | 'webhookDiscards' | 'webhookPostDuration' | 'webhookEventLatency'>;
}

/** The spec's schedule has 4 attempts (WEBHOOK_RETRY.maximumAttempts in workflows/deliver-webhooks.ts, checked by its test). */
export const WEBHOOK_LAST_ATTEMPT = 4;

/** An attempt in the metrics: its outcome and answer, its duration, and for a delivered event how long it took since the event. */
function countAttempt(
  metrics: WebhookAttemptDeps['metrics'],
  attempt: number,
  result: PostResult,
  ok: boolean,
  eventAt: Date,
): void {
  if (!metrics) return;
  const status_class = statusClass(result.statusCode);
  const outcome = ok ? 'delivered' : attempt < WEBHOOK_LAST_ATTEMPT ? 'retrying' : 'failed';
  metrics.webhookAttempts.inc({ outcome, status_class });
  metrics.webhookPostDuration.observe({ status_class }, result.latencyMs / 1000);
  if (ok) metrics.webhookEventLatency.observe(Math.max(0, Date.now() - eventAt.getTime()) / 1000);
}

/** `failed`: the receiver did not acknowledge (no answer, or not 2xx); the attempt is recorded either way. */
export type AttemptOutcome = { result: 'succeeded' | 'skipped' } | { result: 'failed'; error: string };

/**
 * One attempt of a delivery already loaded and counted, shared by the dispatcher's prompt first attempt
 * and the workflow's retries (webhook-activities.ts), so both send, sign and record exactly alike.
 */
export function createWebhookAttempt(deps: WebhookAttemptDeps) {
  return {
    /**
     * A delivery whose webhook was disabled or deleted since the event was queued is discarded unattempted
     * (later events of a disabled webhook are discarded at fan-out); answers whether it may be attempted.
     */
    async admit(d: DeliveryToSend): Promise<boolean> {
      if (d.status !== 'pending') return false;
      if (d.webhook && !d.webhook.disabled) return true;
      const reason = d.webhook ? 'webhook_disabled' : 'webhook_deleted';
      await deps.webhookDeliveries.discard(d.id, reason);
      deps.metrics?.webhookDiscards.inc({ reason });
      return false;
    },

    /** POSTs the event as attempt number `attempt` and records the answer (a 2xx finishes the delivery). */
    send(d: DeliveryToSend, attempt: number): Promise<AttemptOutcome> {
      // Every log line of the attempt names the delivery and what the event is about: an email, or an inbound one.
      const about = d.email ? { emailId: d.email.id } : { inboundId: d.event.inboundId ?? '' };
      return withLogFields({ webhookDeliveryId: d.id, ...about }, () => sendOnce(d, attempt));
    },
  };

  async function sendOnce(d: DeliveryToSend, attempt: number): Promise<AttemptOutcome> {
    const webhook = d.webhook!;
    // The body is the same on every attempt (the event's own time and data); only the signature's
    // timestamp is new, so receivers can both dedupe and refuse replays.
    const body = JSON.stringify(webhookEnvelope(d.event.type, d.event.at, d.email, d.event.data, d.event.id));
    const startedAt = new Date();
    const result = await tracedPost(d, attempt, () =>
      deps.post(webhook.url, body, webhookHeaders(webhook.secrets, d.event.type, body, d.id, startedAt)),
    );
    const ok = result.statusCode >= 200 && result.statusCode < 300;
    const error = ok ? '' : (result.error ?? `HTTP ${result.statusCode}`);
    await deps.webhookDeliveries.recordAttempt(
      d.id,
      {
        attempt,
        startedAt,
        statusCode: result.statusCode,
        latencyMs: result.latencyMs,
        responseExcerpt: result.excerpt,
        error,
      },
      ok,
    );
    countAttempt(deps.metrics, attempt, result, ok, d.event.at);
    if (ok) return { result: 'succeeded' };
    return { result: 'failed', error: result.error ?? `receiver answered HTTP ${result.statusCode}` };
  }
}
export type WebhookAttempt = ReturnType<typeof createWebhookAttempt>;
