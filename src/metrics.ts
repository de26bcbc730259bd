import { Registry, collectDefaultMetrics } from 'prom-client';
import type { QueueStats } from './domain/entities/delivery.js';
import { deliveryMetrics, webhookMetrics } from './metrics/delivery-metrics.js';
import { queueMetrics } from './metrics/queue-metrics.js';
import { requestMetrics } from './metrics/request-metrics.js';
import { temporalMetricsText } from './metrics/temporal-sdk-metrics.js';

export interface MetricsDeps {
  /** The delivery queue's statistics, read at each scrape within the timeout; omitted, no queue gauges. */
  queueStats?: (timeoutMs: number) => Promise<QueueStats>;
  /** Told why a scrape's queue read failed. */
  onQueueError?: (err: unknown) => void;
}

/**
 * The process's Prometheus metrics, served at GET /metrics: the process's own (CPU, memory, event loop),
 * requests, deliveries and webhooks as this process sees them, the delivery queue, and the Temporal SDK's.
 * The names and what they mean are listed in docs/operations.md; deploy/grafana has a dashboard over them.
 */
export function createMetrics(deps: MetricsDeps = {}) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'mailer_' });
  const queue = queueMetrics(registry, deps.queueStats, deps.onQueueError ?? (() => {}));
  return {
    registry,
    contentType: registry.contentType,
    /** The text of a scrape: the queue read now, this registry, then the Temporal SDK's metrics. */
    async scrape(): Promise<string> {
      await queue.refreshQueueGauges();
      return (await registry.metrics()) + (await temporalMetricsText());
    },
    ...requestMetrics(registry),
    ...deliveryMetrics(registry),
    ...webhookMetrics(registry),
  };
}
export type Metrics = ReturnType<typeof createMetrics>;
