/**
 * What the service refused or failed, the same whichever transport carried the call: the spec's `error` code
 * string (`validation error`, `not found`, `too many requests`, ...) and `message` as the service wrote them,
 * the HTTP status (over Connect, the status REST gives the same error), and the request id the service logged
 * the call under. A call that never got an answer (the network failed) has status 0 and error `network error`.
 */
export class MailerError extends Error {
  override readonly name = 'MailerError';
  /** The spec's error code string, e.g. `validation error`. */
  readonly error: string;
  /** HTTP status; 0 when no answer came. */
  readonly status: number;
  /** The service's X-Request-Id of the call, when it answered one. */
  readonly requestId: string | undefined;
  /** How long the service asked to wait before retrying (its Retry-After), in milliseconds. */
  readonly retryAfterMs: number | undefined;

  constructor(init: {
    error: string;
    message: string;
    status: number;
    requestId?: string | undefined;
    retryAfterMs?: number | undefined;
    cause?: unknown;
  }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.error = init.error;
    this.status = init.status;
    this.requestId = init.requestId;
    this.retryAfterMs = init.retryAfterMs;
  }
}

/** A call that failed before any answer: status 0, so that retries treat it as a network failure. */
export function networkError(cause: unknown): MailerError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new MailerError({
    error: 'network error',
    message: `no answer from the service: ${reason}`,
    status: 0,
    cause,
  });
}

/**
 * A Retry-After value (delay-seconds or an HTTP date) in milliseconds from `now`; undefined when absent or
 * unreadable.
 */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
