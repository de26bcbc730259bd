import { ConnectError, type Interceptor } from '@connectrpc/connect';
import { errorMetadata } from '../api/error-metadata.js';
import { toAppError } from '../errors.js';
import type { Logger } from '../logger.js';

/**
 * The gRPC boundary's one error mapping: the code from the table in errors.ts, the spec's `message` as the
 * status message, and the spec's `error` string in the `mail-error` trailer (with `retry-after` and the rate, as REST names them), so that
 * gRPC callers see exactly what REST callers see.
 */
export function toConnectError(err: unknown, logger: Logger, procedure: string): ConnectError {
  if (err instanceof ConnectError) return err;
  const app = toAppError(err);
  if (app.kind === 'internal') logger.error({ err: app.cause ?? err, procedure }, 'rpc failed');
  else if (app.kind === 'unavailable')
    logger.warn({ err: app.cause ?? err, procedure }, 'rpc failed: a dependency is unavailable');
  const body = app.body();
  const metadata = new Headers({ 'mail-error': body.error, ...errorMetadata(app) });
  return new ConnectError(body.message ?? body.error, app.grpcCode, metadata);
}

export function createErrorInterceptor(logger: Logger): Interceptor {
  return (next) => async (req) => {
    try {
      const res = await next(req);
      if (!res.stream) return res;
      // A server-streaming handler fails while its messages are read (a 404 before the first chunk): mapped the same.
      return { ...res, message: mapped(res.message, (err) => toConnectError(err, logger, req.url)) };
    } catch (err) {
      throw toConnectError(err, logger, req.url);
    }
  };
}

async function* mapped<T>(messages: AsyncIterable<T>, map: (err: unknown) => ConnectError): AsyncIterable<T> {
  try {
    yield* messages;
  } catch (err) {
    throw map(err);
  }
}
