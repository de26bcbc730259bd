import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The process's Prometheus metrics, served at GET /metrics. */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'mailer_' });
  return {
    registry,
    httpRequests: new Counter({
      name: 'mailer_http_requests_total', help: 'REST requests answered, by route and status.',
      labelNames: ['method', 'route', 'status'] as const, registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'mailer_http_request_duration_seconds', help: 'REST request latency.',
      labelNames: ['method', 'route'] as const, registers: [registry],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    }),
    deliveries: new Counter({
      name: 'mailer_deliveries_total', help: 'Delivery attempts by outcome (sent, bounced, soft).',
      labelNames: ['outcome'] as const, registers: [registry],
    }),
  };
}
export type Metrics = ReturnType<typeof createMetrics>;
