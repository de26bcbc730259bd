import { Counter, Histogram, type Registry } from 'prom-client';

/** Seconds, from a second to an hour: how late scheduled emails fire, how long events wait for receivers. */
const LATENESS_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600];

/**
 * What became of emails, counted in the process that sees it happen: delivery attempts and their bounces
 * in the worker that sends; bounce and complaint reports in the process that receives them (the API role's
 * report listener, or the worker's mail catcher simulator); scheduled emails in the worker that fires them.
 */
export function deliveryMetrics(registry: Registry) {
  const registers = [registry];
  return {
    deliveries: new Counter({
      name: 'mailer_deliveries_total',
      help: 'Delivery attempts of an email by outcome: sent (a server accepted it), bounced (refused for good, every recipient suppressed, or the retry budget spent), rejected (its account was paused or banned), soft (failed temporarily for some recipient; retried).',
      labelNames: ['outcome'] as const,
      registers,
    }),
    bounces: new Counter({
      name: 'mailer_bounces_total',
      help: 'Bounce events by bounce type (Permanent, Transient), subtype (General; Suppressed: not sent, the address is suppressed) and source (smtp: answered during delivery or retry budget spent; report: a bounce report mailed back).',
      labelNames: ['type', 'subtype', 'source'] as const,
      registers,
    }),
    complaints: new Counter({
      name: 'mailer_complaints_total',
      help: 'Complaints recorded (feedback-loop reports), by ARF feedback type (abuse, fraud, virus, auth-failure, not-spam, other).',
      labelNames: ['feedback_type'] as const,
      registers,
    }),
    inboundReports: new Counter({
      name: 'mailer_inbound_reports_total',
      help: 'Messages mailed back to the service (report listener or catcher simulator) by what became of them: recorded, duplicate, ignored, unknown-email, refused.',
      labelNames: ['outcome'] as const,
      registers,
    }),
    scheduledLateness: new Histogram({
      name: 'mailer_scheduled_lateness_seconds',
      help: "How long after its scheduled_at a scheduled email was fired into the delivery queue, by what fired it (timer: its second's workflow; sweep: the periodic sweep of overdue ones).",
      labelNames: ['fired_by'] as const,
      registers,
      buckets: LATENESS_BUCKETS,
    }),
  };
}

/** Webhook attempts in the worker that POSTs them. */
export function webhookMetrics(registry: Registry) {
  const registers = [registry];
  return {
    webhookAttempts: new Counter({
      name: 'mailer_webhook_attempts_total',
      help: 'Webhook POSTs by outcome (delivered: 2xx; retrying: failed, another attempt follows; failed: the last attempt failed, the event is discarded) and status_class of the answer (2xx, 3xx, 4xx, 5xx; none: no HTTP answer, such as a timeout or refused connection).',
      labelNames: ['outcome', 'status_class'] as const,
      registers,
    }),
    webhookDiscards: new Counter({
      name: 'mailer_webhook_discards_total',
      help: 'Webhook events given up on, by reason (retries_exhausted; webhook_disabled or webhook_deleted after the event was queued).',
      labelNames: ['reason'] as const,
      registers,
    }),
    webhookPostDuration: new Histogram({
      name: 'mailer_webhook_post_duration_seconds',
      help: "Duration of one webhook POST, until the receiver's answer was read (or the 10 s limit).",
      labelNames: ['status_class'] as const,
      registers,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    }),
    webhookEventLatency: new Histogram({
      name: 'mailer_webhook_event_latency_seconds',
      help: 'From an event (its time) to the receiver acknowledging it with a 2xx, retries included.',
      registers,
      buckets: LATENESS_BUCKETS,
    }),
  };
}

/** The class of an HTTP status for a label: 2xx ... 5xx, or none when no answer came (0). */
export function statusClass(statusCode: number): string {
  return statusCode >= 100 && statusCode < 600 ? `${Math.floor(statusCode / 100)}xx` : 'none';
}
