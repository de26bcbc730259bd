import { randomUUID } from 'node:crypto';

/** The header a request id comes in and goes back out in (REST and gRPC alike). */
export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * What an incoming X-Request-Id may be to be taken as the request's id: short, and of characters that need
 * no escaping in a log line, a header or a URL. Anything else (too long, spaces, quotes, control characters,
 * a repeated header) is ignored and a fresh id made, so a caller can neither forge log structure nor bloat it.
 */
const ACCEPTED = /^[A-Za-z0-9._:-]{1,64}$/;

/** The caller's id when acceptable, else a new one (a UUID). */
export function requestIdFrom(header: string | string[] | undefined): string {
  return typeof header === 'string' && ACCEPTED.test(header) ? header : randomUUID();
}
