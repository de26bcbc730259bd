import type { DescMessage, DescMethodUnary, MessageShape } from '@bufbuild/protobuf';
import { Code, ConnectError, type Transport } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-web';
import { MailerError, networkError, parseRetryAfter } from './errors.js';
import type { Invoker } from './transport.js';

/**
 * The HTTP status REST answers for each of the spec's error strings (the server's table, src/errors.ts), so that
 * a MailerError reads the same over both transports: gRPC codes alone would merge 413 into 429
 * (RESOURCE_EXHAUSTED) and 405 into 501 (UNIMPLEMENTED).
 */
const STATUS_OF_ERROR: Record<string, number> = {
  'validation error': 400,
  unauthorized: 401,
  'permission denied': 403,
  'not found': 404,
  'method not allowed': 405,
  conflict: 409,
  'payload too large': 413,
  'uri too long': 414,
  'unsupported media type': 415,
  'request header fields too large': 431,
  'too many requests': 429,
  'service unavailable': 503,
  'internal server error': 500,
};

/** Connect's own code-to-HTTP mapping (connectrpc.com/docs/protocol#error-codes), for errors without the spec's string. */
const STATUS_OF_CODE: Record<Code, number> = {
  [Code.Canceled]: 499,
  [Code.Unknown]: 500,
  [Code.InvalidArgument]: 400,
  [Code.DeadlineExceeded]: 504,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.PermissionDenied]: 403,
  [Code.ResourceExhausted]: 429,
  [Code.FailedPrecondition]: 400,
  [Code.Aborted]: 409,
  [Code.OutOfRange]: 400,
  [Code.Unimplemented]: 501,
  [Code.Internal]: 500,
  [Code.Unavailable]: 503,
  [Code.DataLoss]: 500,
  [Code.Unauthenticated]: 401,
};

/** The snake_case name of a code (`resource_exhausted`), as the Connect protocol writes it. */
const codeName = (code: Code): string =>
  Code[code].replace(/[A-Z]/g, (c, i: number) => (i ? '_' : '') + c.toLowerCase());

/**
 * A ConnectError as a MailerError. The service sends the spec's error string in the `mail-error` metadata and
 * its message as the status message (src/rpc/error-interceptor.ts). An error with neither that metadata nor a
 * status from the server (Unknown, carrying the fetch failure as its cause) is a network failure.
 */
export function fromConnectError(err: ConnectError): MailerError {
  const error = err.metadata.get('mail-error');
  if (error === null && err.code === Code.Unknown && err.cause !== undefined) return networkError(err.cause);
  return new MailerError({
    error: error ?? codeName(err.code),
    message: err.rawMessage,
    status: (error !== null ? STATUS_OF_ERROR[error] : undefined) ?? STATUS_OF_CODE[err.code],
    requestId: err.metadata.get('x-request-id') ?? undefined,
    retryAfterMs: parseRetryAfter(err.metadata.get('retry-after')),
    cause: err,
  });
}

/**
 * connect-web's Connect protocol over fetch, in its JSON form: a request of only default fields is then `{}`
 * rather than an empty body, which undici's HTTP/2 client (a Node `fetch` reaching the h2c port) never
 * finishes sending.
 */
export function connectWebTransport(baseUrl: string, fetchFn: typeof fetch): Transport {
  return createConnectTransport({ baseUrl, fetch: fetchFn, useBinaryFormat: false });
}

/** Calls over any connect-es Transport: connect-web's, or connect-node's gRPC or Connect transports. */
export function connectInvoker(transport: Transport): Invoker {
  return {
    async unary<I extends DescMessage, O extends DescMessage>(
      method: DescMethodUnary<I, O>,
      input: MessageShape<I>,
      headers: Headers,
      signal: AbortSignal | undefined,
    ): Promise<MessageShape<O>> {
      try {
        const res = await transport.unary(method, signal, undefined, headers, input);
        return res.message;
      } catch (err) {
        if (signal?.aborted) throw err;
        throw err instanceof ConnectError ? fromConnectError(err) : networkError(err);
      }
    },
  };
}
