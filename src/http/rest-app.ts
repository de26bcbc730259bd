import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { CallContext, Handlers } from '../api/call-context.js';
import type { BytesInFlight } from '../bytes-in-flight.js';
import { BODY_LIMITS } from '../domain/limits.js';
import { AppError, invalid, unavailable } from '../errors.js';
import type { AdminService } from '../gen/mail/v1/admin_service_pb.js';
import type { EmailService } from '../gen/mail/v1/email_service_pb.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { countBodiesInFlight } from './body-bytes.js';
import { asAppError, createErrorHandler, sendError } from './error-handler.js';
import { registerGateway } from './gateway.js';
import { registerCsvRoutes } from './csv-routes.js';
import { registerBytesRoutes } from './bytes-routes.js';
import type { SuppressionStreams } from '../api/suppressions-api.js';
import type { AdminSuppressionStreams } from '../api/admin-suppressions-api.js';
import { buildOpenApi } from './openapi.js';
import { registerProbeRoutes } from './probe-routes.js';
import { registerRequestContext, requestIdOptions } from './request-context.js';
import { ADMIN_BASE, ADMIN_ROUTES, API_BASE, PUBLIC_ROUTES } from './rest-routes.js';
import { createRouteMethods } from './route-methods.js';

/** The longest request target taken (path and query); longer is 414. Node refuses header blocks over 16 KiB itself. */
export const MAX_URL_CHARS = 8192;

export interface RestAppDeps {
  /** The handlers the routes of PUBLIC_ROUTES and ADMIN_ROUTES call (registerGateway refuses to start without one). */
  /** The RPCs, and the CSV export streams csv-routes.ts serves beside them (no RPC of their own on REST). */
  emailApi: Partial<Handlers<typeof EmailService>> & Partial<SuppressionStreams>;
  adminApi: Partial<Handlers<typeof AdminService>> & Partial<AdminSuppressionStreams>;
  /** Admits a call to the email API (key, rate limit) before its body is read. */
  admitApi: (ctx: CallContext) => Promise<unknown>;
  /** Admits a call to the management API (admin token) before its body is read. */
  admitAdmin: (ctx: CallContext) => Promise<unknown>;
  logger: Logger;
  metrics: Metrics;
  /** Request bodies held at once, per process and per key (shared with gRPC and SMTP submission). */
  bytesInFlight: BytesInFlight;
  publicUrl: string;
  /**
   * MAILER_TRUSTED_PROXIES: the reverse proxies whose X-Forwarded-For names the client (`request.ip`); none
   * when empty or absent, so that no client can name its own address.
   */
  trustedProxies?: string[];
  /** Throws a 401 AppError unless the request's bearer credential may read /metrics (MAILER_METRICS_TOKEN). */
  admitMetrics: (credential: string | undefined) => void;
  /** The dependencies that do not answer (`database`, `temporal`); empty when ready. */
  checkReady: () => Promise<string[]>;
  /** Extra routes (the console) registered by their own module. */
  plugins?: ((app: FastifyInstance) => Promise<void>)[];
}

/** The REST gateway (HTTP/1.1, JSON): the spec's paths over the shared handlers, plus health and metrics. */
export async function buildRestApp(deps: RestAppDeps): Promise<FastifyInstance> {
  const app: FastifyInstance = fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMITS.other,
    // Requests arriving while the server closes are refused below, in the spec's shape, not Fastify's.
    return503OnClosing: false,
    routerOptions: { ignoreTrailingSlash: true },
    // A URL Fastify cannot decode never reaches a route or the error handler: it is answered here, the same way.
    frameworkErrors: (err, request, reply) => sendError(reply, asAppError(err, request)),
    clientErrorHandler: answerClientError,
    trustProxy: deps.trustedProxies !== undefined && deps.trustedProxies.length > 0 ? deps.trustedProxies : false,
    ...requestIdOptions,
  });
  app.decorateRequest('callContext', null);
  registerRequestContext(app);

  const routeMethods = createRouteMethods();
  app.addHook('onRoute', (route) => routeMethods.add(route.method, route.url ?? route.path));

  const unrouted = (method: string, url: string) => unroutedError(routeMethods, method, url);
  refuseEarly(app, unrouted);
  parseEveryBodyAsJson(app);
  countBodiesInFlight(app, deps.bytesInFlight);
  app.setErrorHandler(createErrorHandler(deps.logger));
  app.setNotFoundHandler((request, reply) => sendError(reply, unrouted(request.method, request.url)));

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    deps.metrics.httpRequests.inc({ method: request.method, route, status: String(reply.statusCode) });
    deps.metrics.httpDuration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });

  registerGateway(app, API_BASE, PUBLIC_ROUTES, deps.emailApi, deps.admitApi);
  registerCsvRoutes(app, API_BASE, PUBLIC_ROUTES, deps.emailApi, deps.admitApi);
  registerBytesRoutes(app, API_BASE, PUBLIC_ROUTES, deps.emailApi, deps.admitApi);
  registerGateway(app, ADMIN_BASE, ADMIN_ROUTES, deps.adminApi, deps.admitAdmin);
  registerCsvRoutes(app, ADMIN_BASE, ADMIN_ROUTES, deps.adminApi, deps.admitAdmin);
  registerBytesRoutes(app, ADMIN_BASE, ADMIN_ROUTES, deps.adminApi, deps.admitAdmin);

  registerServiceRoutes(app, deps);

  for (const plugin of deps.plugins ?? []) await plugin(app);
  return app;
}

/** Why no route took the request: another method of a known path (405 with Allow), or no such route (404). */
function unroutedError(routeMethods: ReturnType<typeof createRouteMethods>, method: string, url: string): AppError {
  const path = url.split('?')[0] ?? '';
  const allowed = routeMethods.allowed(path);
  // A pattern may match a path the router still refused (an empty wildcard): only another method makes it a 405.
  if (allowed.length > 0 && !allowed.includes(method)) {
    return new AppError('method_not_allowed', `${path} does not answer ${method}; it answers ${allowed.join(', ')}`, {
      allowedMethods: allowed,
    });
  }
  return new AppError('not_found', `route ${method} ${path} not found`);
}

/** Checked on arrival (onRequest), before Fastify reads a body: a request refused anyway costs no upload. */
function refuseEarly(app: FastifyInstance, unrouted: (method: string, url: string) => AppError): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (request) => {
    if (closing) {
      throw unavailable('The server is shutting down; retry on another instance or shortly');
    }
    // Unrouted requests are answered before Fastify reads (or refuses) a body they may carry (QUERY, PUT).
    if (request.routeOptions.url === undefined) throw unrouted(request.method, request.url);
    if (request.url.length > MAX_URL_CHARS) {
      throw new AppError(
        'uri_too_long',
        `The request URL is ${request.url.length} characters long; the maximum is ${MAX_URL_CHARS}`,
      );
    }
    // Bodies are read as they come: a compressed one would be parsed as garbage, so it is refused by name.
    const encoding = request.headers['content-encoding'];
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
      throw new AppError(
        'unsupported_media_type',
        `Content-Encoding ${encoding.slice(0, 40)} is not supported: send the body uncompressed`,
      );
    }
  });
}

function parseEveryBodyAsJson(app: FastifyInstance): void {
  // Every body is read as JSON whatever its Content-Type says: a client that forgets the header gets the
  // same answer as one that sends it. This opens no CSRF hole: keys and the admin token are bearer tokens, and a
  // request the console's session cookie authenticates must carry its X-CSRF-Token header, which no page of
  // another site can set (api/console-session-admission.ts).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      done(invalid(`The request body is not valid JSON: ${(err as Error).message}`), undefined);
    }
  });
}

function registerServiceRoutes(app: FastifyInstance, deps: RestAppDeps): void {
  const openapi = buildOpenApi(deps.publicUrl);
  app.get(`${API_BASE}/openapi.json`, async () => openapi);
  registerProbeRoutes(app, deps);
}

/**
 * Requests Node's HTTP parser refuses (malformed, or a header block over its limit) never become Fastify
 * requests: they are answered on the socket, still in the spec's shape.
 */
function answerClientError(err: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) return;
  const err2 =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? new AppError('headers_too_large', "The request line and headers exceed the server's limit of 16 KiB")
      : new AppError('validation', 'The request is not valid HTTP/1.1');
  const body = JSON.stringify(err2.body());
  socket.end(
    `HTTP/1.1 ${err2.status} ${STATUS_CODES[err2.status] ?? ''}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
