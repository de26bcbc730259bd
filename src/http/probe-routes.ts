import fastify, { type FastifyInstance } from 'fastify';
import { bearerCredential } from '../api/call-context.js';
import { AppError, unavailable } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { createErrorHandler, errorReply } from './error-handler.js';
import { registerRequestContext, requestIdOptions } from './request-context.js';

export interface ProbeDeps {
  metrics: Metrics;
  /** Throws a 401 AppError unless the request's bearer credential may read /metrics (MAILER_METRICS_TOKEN). */
  admitMetrics: (credential: string | undefined) => void;
  /** The dependencies that do not answer (`database`, `temporal`); empty when ready. */
  checkReady: () => Promise<string[]>;
}

/** `GET /healthz` (the process answers), `/readyz` (its dependencies do) and `/metrics` (Prometheus text). */
export function registerProbeRoutes(app: FastifyInstance, deps: ProbeDeps): void {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const down = await deps.checkReady();
    if (down.length === 0) return { status: 'ready' };
    // Names the components only: addresses and driver messages are for the log, not for whoever probes.
    const names = down.map((c) => (c === 'temporal' ? 'Temporal' : c)).join(' and ');
    const err = unavailable(`not ready: ${names} unreachable`);
    return errorReply(reply, err).send({ ...err.body(), down });
  });
  app.get('/metrics', async (request, reply) => {
    deps.admitMetrics(bearerCredential(request.headers.authorization));
    void reply.header('content-type', deps.metrics.contentType);
    return deps.metrics.scrape();
  });
}

/**
 * The probes alone, for a process without the REST gateway (MAILER_ROLE=worker): what an orchestrator
 * checks and Prometheus scrapes, delivery metrics included, on MAILER_WORKER_PORT.
 */
export async function buildProbeApp(deps: ProbeDeps & { logger: Logger }): Promise<FastifyInstance> {
  const app = fastify({ logger: false, ...requestIdOptions });
  registerRequestContext(app);
  app.setErrorHandler(createErrorHandler(deps.logger));
  app.setNotFoundHandler((request) => {
    throw new AppError('not_found', `route ${request.method} ${request.url.split('?')[0] ?? ''} not found`);
  });
  registerProbeRoutes(app, deps);
  await app.ready();
  return app;
}
