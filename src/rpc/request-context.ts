import {
  Code,
  ConnectError,
  createContextKey,
  type Interceptor,
  type UnaryRequest,
  type StreamRequest,
  type ContextValues,
} from '@connectrpc/connect';
import {
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Span,
  type TextMapGetter,
} from '@opentelemetry/api';
import { withLogFields } from '../telemetry/log-context.js';
import { tracingEnabled } from '../telemetry/spans.js';

/** The call's request id (Fastify's, from an acceptable X-Request-Id or made: telemetry/request-id.ts). */
export const REQUEST_ID = createContextKey<string>('', { description: 'request id' });

/** Runs `fn` with the call's request id in every log line. */
export function inCallLogContext<T>(values: ContextValues, fn: () => T): T {
  return withLogFields({ reqId: values.get(REQUEST_ID) }, fn);
}

const headerGetter: TextMapGetter<Headers> = {
  get: (headers, key) => headers.get(key) ?? undefined,
  keys: (headers) => [...headers.keys()],
};

/** gRPC's OK, which Connect's Code enum does not name. */
const OK = 0;

/** Codes that say the service failed rather than the call was refused: the span's status is an error. */
const SERVER_FAULTS = new Set([
  Code.Unknown,
  Code.Internal,
  Code.Unavailable,
  Code.DataLoss,
  Code.DeadlineExceeded,
  Code.Unimplemented,
]);

/**
 * Outermost interceptor: the call's request id in every log line its handler writes and, when tracing is
 * on, a server span per RPC (`mail.v1.EmailService/SendEmail`), continuing a `traceparent` the caller sent,
 * with the gRPC status code it ended with.
 */
export function createRequestContextInterceptor(): Interceptor {
  return (next) => async (req) =>
    inCallLogContext(req.contextValues, () => {
      if (!tracingEnabled()) return next(req);
      const parent = propagation.extract(ROOT_CONTEXT, req.header, headerGetter);
      const options = { kind: SpanKind.SERVER, attributes: rpcAttributes(req) };
      return trace
        .getTracer('mailer')
        .startActiveSpan(`${req.service.typeName}/${req.method.name}`, options, parent, async (span) => {
          try {
            const res = await next(req);
            span.setAttribute('rpc.grpc.status_code', OK);
            return res;
          } catch (err) {
            recordCode(span, err);
            throw err;
          } finally {
            span.end();
          }
        });
    });
}

function rpcAttributes(req: UnaryRequest | StreamRequest) {
  return {
    'rpc.system': req.header.get('content-type')?.startsWith('application/grpc') ? 'grpc' : 'connect_rpc',
    'rpc.service': req.service.typeName,
    'rpc.method': req.method.name,
    'mailer.request_id': req.contextValues.get(REQUEST_ID),
  };
}

/** A refusal (invalid argument, not found, rate limit) is the caller's doing: only a fault of the service marks the span an error. */
function recordCode(span: Span, err: unknown): void {
  const error = ConnectError.from(err);
  span.setAttribute('rpc.grpc.status_code', error.code);
  if (SERVER_FAULTS.has(error.code)) span.setStatus({ code: SpanStatusCode.ERROR, message: error.rawMessage });
}
