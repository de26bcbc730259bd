import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { errorMetadata, rateMetadata } from '../api/error-metadata.js';
import { AppError, ERROR_TABLE, toAppError, type ErrorKind } from '../errors.js';
import type { Logger } from '../logger.js';
import { REQUEST_ID_HEADER } from '../telemetry/request-id.js';

/**
 * The REST boundary's one error path: whatever failed (a service's AppError, Fastify refusing a body, a URL or
 * a content type, a route that does not exist, anything unexpected) becomes an AppError, and the table in
 * errors.ts alone decides its status and `error` string. 5xx never carry internal details.
 */

/** Fastify's own refusals, by code, as the service's kinds; any other 4xx of Fastify's falls back on its status. */
const FASTIFY_CODES: Record<string, ErrorKind> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'validation',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'validation',
  FST_ERR_CTP_INVALID_JSON_BODY: 'validation',
  FST_ERR_BAD_URL: 'validation',
  FST_ERR_INVALID_URL: 'validation',
};

/** The kinds a 4xx of Fastify's may be, told apart by the status the table gives each; any other is a validation error. */
const FRAMEWORK_KINDS: readonly ErrorKind[] = [
  'validation',
  'not_found',
  'method_not_allowed',
  'payload_too_large',
  'uri_too_long',
  'unsupported_media_type',
  'headers_too_large',
];
const kindOfStatus = (status: number): ErrorKind =>
  FRAMEWORK_KINDS.find((kind) => ERROR_TABLE[kind].http === status) ?? 'validation';

/** What the caller is told for each of Fastify's refusals: its own text names Fastify internals. */
function frameworkMessage(kind: ErrorKind, err: FastifyError, request: FastifyRequest): string {
  switch (kind) {
    case 'payload_too_large':
      return `The request body exceeds the limit of ${request.routeOptions.bodyLimit ?? 0} bytes for this endpoint`;
    case 'unsupported_media_type':
      return 'The request body must be JSON';
    default:
      if (err.code === 'FST_ERR_BAD_URL' || err.code === 'FST_ERR_INVALID_URL')
        return 'The request URL is not valid (bad percent-encoding or characters)';
      if (err.code?.startsWith('FST_ERR_CTP_')) return 'The request body must be a JSON object';
      // Any other 4xx keeps its own message: a 4xx describes the request, and only 5xx details are hidden.
      return err.message;
  }
}

/** Any error as an AppError: the service's own as they are, Fastify's 4xx by the tables above, the rest internal. */
export function asAppError(err: unknown, request: FastifyRequest): AppError {
  if (err instanceof AppError) return err;
  const fe = err as Partial<FastifyError>;
  const kind =
    (fe.code !== undefined ? FASTIFY_CODES[fe.code] : undefined) ??
    (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500
      ? kindOfStatus(fe.statusCode)
      : undefined);
  if (kind === undefined) return toAppError(err);
  return new AppError(kind, frameworkMessage(kind, fe as FastifyError, request), { cause: err });
}

/** Sets the table's status and the headers that say what `err` carries (Retry-After, RateLimit-*, Allow). */
export function errorReply(reply: FastifyReply, err: AppError): FastifyReply {
  // Also set by request-context.ts on arrival; an error Fastify answers before its hooks (a URL it cannot decode) has it too.
  void reply.code(err.status).headers(errorMetadata(err)).header(REQUEST_ID_HEADER, reply.request.id);
  if (err.allowedMethods) void reply.header('allow', err.allowedMethods.join(', '));
  return reply;
}

/** Writes `err` as the spec's `{error, message}` with the table's status and the error's headers. */
export function sendError(reply: FastifyReply, err: AppError): void {
  void errorReply(reply, err).send(err.body());
}

export function createErrorHandler(logger: Logger) {
  return function handleError(err: unknown, request: FastifyRequest, reply: FastifyReply): void {
    // A call refused after its key was admitted still reports the key's rate.
    const rate = request.callContext?.rate;
    if (rate) void reply.headers(rateMetadata(rate));
    const app = asAppError(err, request);
    // The request id by name: an error thrown from a hook is handled outside the handler's log context.
    if (app.kind === 'internal')
      logger.error({ err: app.cause ?? err, url: request.url, reqId: request.id }, 'request failed');
    // A database or Temporal that cannot be reached is answered 503 with Retry-After, and is no bug of ours.
    if (app.kind === 'unavailable')
      logger.warn(
        { err: app.cause ?? err, url: request.url, reqId: request.id },
        'request failed: a dependency is unavailable',
      );
    sendError(reply, app);
  };
}
