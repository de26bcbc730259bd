import { Registry, collectDefaultMetrics } from 'prom-client';
import type { QueueStats } from './domain/entities/delivery.js';
import { deliveryMetrics, webhookMetrics } from './metrics/delivery-metrics.js';
import { domainMetrics } from './metrics/domain-metrics.js';
import { QUEUE_STATS_TIMEOUT_MS, queueMetrics } from './metrics/queue-metrics.js';
import { requestMetrics } from './metrics/request-metrics.js';
import { temporalMetricsText } from './metrics/temporal-sdk-metrics.js';

export interface MetricsDeps {
  /** The delivery queue's statistics, read at each scrape within the timeout; omitted, no queue gauges. */
  queueStats?: (timeoutMs: number) => Promise<QueueStats>;
  /** Told why a scrape's queue read failed. */
  onQueueError?: (err: unknown) => void;
  /** How many verified domains' DNS records fail, read at each scrape within the timeout; omitted, the gauge stays 0. */
  dnsFailingDomains?: (timeoutMs: number) => Promise<number>;
  /** Told why a scrape's count of failing domains failed. */
  onDomainsError?: (err: unknown) => void;
}

/**
 * The process's Prometheus metrics, served at GET /metrics: the process's own (CPU, memory, event loop),
 * requests, deliveries and webhooks as this process sees them, the delivery queue, sender domains whose DNS
 * fails, and the Temporal SDK's.
 * The names and what they mean are listed in docs/operations.md; deploy/grafana has a dashboard over them.
 */
export function createMetrics(deps: MetricsDeps = {}) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'mailer_' });
  const queue = queueMetrics(registry, deps.queueStats, deps.onQueueError ?? (() => {}));
  const domains = domainMetrics(registry, deps.dnsFailingDomains, deps.onDomainsError ?? (() => {}));
  return {
    registry,
    contentType: registry.contentType,
    /** The text of a scrape: the queue and domains read now, this registry, then the Temporal SDK's metrics. */
    async scrape(): Promise<string> {
      await Promise.all([queue.refreshQueueGauges(), domains.refreshDomainGauges(QUEUE_STATS_TIMEOUT_MS)]);
      return (await registry.metrics()) + (await temporalMetricsText());
    },
    ...requestMetrics(registry),
    ...deliveryMetrics(registry),
    ...webhookMetrics(registry),
  };
}
export type Metrics = ReturnType<typeof createMetrics>;
