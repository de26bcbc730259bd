import { MailerError } from './errors.js';

/** How calls are retried (MailerOptions.retry). */
export interface RetryOptions {
  /** Retries after the first attempt; 0: none. Default 2. */
  maxRetries?: number;
  /** The first backoff step; each retry doubles it, up to maxDelayMs. Default 500 ms. */
  initialDelayMs?: number;
  /** The longest backoff step. Default 8000 ms. */
  maxDelayMs?: number;
  /**
   * The longest Retry-After honoured. When the service asks for more, the error is thrown at once rather than
   * retried early (it would only be refused again) or after a wait the caller did not choose. Default 60 s.
   */
  maxRetryAfterMs?: number;
}

export type RetryPolicy = Required<RetryOptions>;

export const DEFAULT_RETRY: RetryPolicy = {
  maxRetries: 2,
  initialDelayMs: 500,
  maxDelayMs: 8000,
  maxRetryAfterMs: 60_000,
};

/**
 * Whether a call may be sent again after `err`:
 * - `safe` calls (reads, deletes, renders, and creates sent with an Idempotency-Key, which the service answers
 *   once): after a network failure, a 429 or a 5xx (but 501), and a 409, which for a send means its
 *   Idempotency-Key's first request is still being answered;
 * - other calls (a create without a key: a template, a webhook, an inbound route): only after the service
 *   refused before acting, 429 or 503, since a network failure or a 500 may have come after it acted.
 */
export function isRetryable(err: unknown, safe: boolean): err is MailerError {
  if (!(err instanceof MailerError)) return false;
  const s = err.status;
  if (!safe) return s === 429 || s === 503;
  return s === 0 || s === 429 || s === 409 || (s >= 500 && s !== 501);
}

/**
 * Retry `n`'s backoff: an exponential step (initialDelayMs doubled per retry, capped) of which a random half is
 * waited ("equal jitter"): clients that failed together do not all come back together, and none retries at
 * once.
 */
export function backoffMs(n: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const step = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** n);
  return step / 2 + random() * (step / 2);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs `attempt` until it succeeds, fails in a way that is not retried, or has been retried
 * `policy.maxRetries` times; between attempts waits the service's Retry-After when it gave one, else the
 * backoff. The last error is thrown as it is.
 */
export async function withRetries<T>(
  attempt: () => Promise<T>,
  policy: RetryPolicy,
  safe: boolean,
  signal: AbortSignal | undefined,
): Promise<T> {
  for (let n = 0; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (n >= policy.maxRetries || signal?.aborted || !isRetryable(err, safe)) throw err;
      const asked = err.retryAfterMs;
      if (asked !== undefined && asked > policy.maxRetryAfterMs) throw err;
      await sleep(asked ?? backoffMs(n, policy), signal);
    }
  }
}
