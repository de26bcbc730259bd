import type { IncomingMessage } from 'node:http';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import {
  ATTR_CLIENT_ADDRESS,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
} from '@opentelemetry/semantic-conventions';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { withLogFields } from '../telemetry/log-context.js';
import { REQUEST_ID_HEADER, requestIdFrom } from '../telemetry/request-id.js';
import { tracingEnabled } from '../telemetry/spans.js';

/** Fastify's options for request ids: the caller's X-Request-Id when acceptable (telemetry/request-id.ts), else a new one. */
export const requestIdOptions = {
  requestIdHeader: false as const,
  genReqId: (req: IncomingMessage) => requestIdFrom(req.headers[REQUEST_ID_HEADER]),
};

const spans = new WeakMap<FastifyRequest, Span>();

/**
 * What every request of a REST app carries: its id in the X-Request-Id answer header (errors included) and
 * in every log line written while its handler runs, and, when tracing is on, a server span named by the
 * route's template, continuing a `traceparent` the caller sent. Register before any route.
 *
 * The handler is where the context is entered (each route's handler is wrapped): Fastify calls it from the
 * request body's events, which run in the connection's async context, not in the one a hook entered.
 */
export function registerRequestContext(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    void reply.header(REQUEST_ID_HEADER, request.id);
    if (tracingEnabled()) spans.set(request, startServerSpan(request));
    done();
  });
  app.addHook('onRoute', (route) => {
    const handler = route.handler as RouteHandlerMethod;
    route.handler = function (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
      return inRequestContext(request, () => handler.call(this, request, reply));
    } as RouteHandlerMethod;
  });
  app.addHook('onResponse', (request, reply, done) => {
    endServerSpan(request, reply.statusCode);
    done();
  });
  // A caller that goes away before the answer: the span still ends.
  app.addHook('onRequestAbort', (request, done) => {
    endServerSpan(request, undefined);
    done();
  });
}

function inRequestContext<T>(request: FastifyRequest, fn: () => T): T {
  const span = spans.get(request);
  const run = () => withLogFields({ reqId: request.id }, fn);
  return span ? context.with(trace.setSpan(context.active(), span), run) : run();
}

function startServerSpan(request: FastifyRequest): Span {
  const parent = propagation.extract(ROOT_CONTEXT, request.headers);
  return trace.getTracer('mailer').startSpan(
    request.method,
    {
      kind: SpanKind.SERVER,
      attributes: {
        [ATTR_HTTP_REQUEST_METHOD]: request.method,
        [ATTR_CLIENT_ADDRESS]: request.ip,
        'mailer.request_id': request.id,
      },
    },
    parent,
  );
}

/** Named `METHOD /route/{template}` once the route is known (never by the raw URL: ids and tokens stay out). */
function endServerSpan(request: FastifyRequest, status: number | undefined): void {
  const span = spans.get(request);
  if (!span) return;
  spans.delete(request);
  const route = request.routeOptions.url;
  if (route !== undefined) {
    span.updateName(`${request.method} ${route}`);
    span.setAttribute(ATTR_HTTP_ROUTE, route);
  }
  if (status !== undefined) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
  if (status === undefined || status >= 500)
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: status === undefined ? 'request aborted' : `HTTP ${status}`,
    });
  span.end();
}
