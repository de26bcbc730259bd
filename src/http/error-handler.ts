import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ERROR_TABLE, toAppError } from '../errors.js';
import type { Logger } from '../logger.js';

/**
 * The REST boundary's one error mapping: AppError by the table in errors.ts; Fastify's own errors (body
 * too large, malformed JSON) in the spec's `{error, message}` shape; anything else a 500 that leaks nothing.
 */
export function createErrorHandler(logger: Logger) {
  return function handleError(err: FastifyError | AppError | Error, request: FastifyRequest, reply: FastifyReply): void {
    const ctx = request.callContext;
    if (ctx) ctx.responseHeader.forEach((value, key) => void reply.header(key, value));

    if (err instanceof AppError) {
      if (err.kind === 'internal') logger.error({ err: err.cause ?? err, url: request.url }, 'request failed');
      void reply.code(err.status).headers(err.headers).send(err.body());
      return;
    }
    const fe = err as FastifyError;
    switch (fe.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        void reply.code(413).send({
          error: ERROR_TABLE.payload_too_large.error,
          message: `The request body exceeds the limit of ${request.routeOptions.bodyLimit ?? 0} bytes for this endpoint`,
        });
        return;
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        void reply.code(400).send({ error: ERROR_TABLE.validation.error, message: 'The request body must be a JSON object' });
        return;
    }
    if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
      void reply.code(fe.statusCode).send({ error: fe.statusCode === 400 ? ERROR_TABLE.validation.error : 'bad request', message: fe.message });
      return;
    }
    // A database or Temporal that cannot be reached: 503 with Retry-After, not a 500.
    const unavailable = toAppError(err);
    if (unavailable.kind === 'unavailable') {
      logger.warn({ err, url: request.url }, 'request failed: a dependency is unavailable');
      void reply.code(unavailable.status).headers(unavailable.headers).send(unavailable.body());
      return;
    }
    logger.error({ err, url: request.url }, 'request failed');
    void reply.code(500).send({ error: ERROR_TABLE.internal.error, message: 'An internal error occurred' });
  };
}
