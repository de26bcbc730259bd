import fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { CallContext } from '../api/call-context.js';
import { BODY_LIMITS } from '../domain/limits.js';
import { ERROR_TABLE } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { createErrorHandler } from './error-handler.js';
import { registerGateway } from './gateway.js';
import { buildOpenApi } from './openapi.js';
import { ADMIN_BASE, ADMIN_ROUTES, API_BASE, EMAIL_ROUTES } from './rest-routes.js';

type Handlers = Parameters<typeof registerGateway>[3];

export interface RestAppDeps {
  emailApi: object;
  adminApi: object;
  /** Admits a call to the email API (key, rate limit) before its body is read. */
  admitApi: (ctx: CallContext) => Promise<unknown>;
  /** Admits a call to the management API (admin token) before its body is read. */
  admitAdmin: (ctx: CallContext) => Promise<unknown>;
  logger: Logger;
  metrics: Metrics;
  publicUrl: string;
  /** Throws a 401 AppError unless the request may read /metrics (MAILER_METRICS_TOKEN). */
  admitMetrics: (authorization: string | undefined) => void;
  /** Resolves when the database and Temporal answer; rejects naming what does not. */
  checkReady: () => Promise<void>;
  /** Extra routes (the console) registered by their own module. */
  plugins?: ((app: FastifyInstance) => Promise<void>)[];
}

/** The REST gateway (HTTP/1.1, JSON): the spec's paths over the shared handlers, plus health and metrics. */
export async function buildRestApp(deps: RestAppDeps): Promise<FastifyInstance> {
  const app: FastifyInstance = fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMITS.other,
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true },
  });
  app.decorateRequest('callContext', null);

  // Every body is read as JSON whatever its Content-Type says: a client that forgets the header gets the
  // same answer as one that sends it. (Keys are bearer tokens, not cookies, so this opens no CSRF hole.)
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      done(Object.assign(new Error(`The request body is not valid JSON: ${(err as Error).message}`), { statusCode: 400 }), undefined);
    }
  });

  app.setErrorHandler(createErrorHandler(deps.logger));
  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send({ error: ERROR_TABLE.not_found.error, message: `route ${request.method} ${request.url.split('?')[0]} not found` });
  });

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    deps.metrics.httpRequests.inc({ method: request.method, route, status: String(reply.statusCode) });
    deps.metrics.httpDuration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });

  registerGateway(app, API_BASE, EMAIL_ROUTES, deps.emailApi as Handlers, deps.admitApi);
  registerGateway(app, ADMIN_BASE, ADMIN_ROUTES, deps.adminApi as Handlers, deps.admitAdmin);

  const openapi = buildOpenApi(deps.publicUrl);
  app.get(`${API_BASE}/openapi.json`, async () => openapi);
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    try {
      await deps.checkReady();
      return { status: 'ready' };
    } catch (err) {
      return reply.code(503).send({ error: ERROR_TABLE.unavailable.error, message: (err as Error).message });
    }
  });
  app.get('/metrics', async (request, reply) => {
    deps.admitMetrics(request.headers.authorization);
    void reply.header('content-type', deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });

  for (const plugin of deps.plugins ?? []) await plugin(app);
  return app;
}
