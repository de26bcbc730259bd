import type { RateDecision } from '../domain/rate-decision.js';
import { AppError } from '../errors.js';

/**
 * A token bucket per API key, in this process: `rate` requests a second, bursts up to `rate`. With several
 * API processes each keeps its own buckets (documented in docs/api.md).
 */

const PRUNE_EVERY = 10_000;

export function createRateLimiter(rate: number, now: () => number = Date.now) {
  const buckets = new Map<string, { tokens: number; at: number }>();
  let takes = 0;

  function prune(t: number): void {
    for (const [key, b] of buckets) if (b.tokens + ((t - b.at) / 1000) * rate >= rate) buckets.delete(key);
  }

  return {
    /** Takes one request from `key`'s bucket; throws a 429 saying when to retry when it is empty. */
    take(key: string): RateDecision {
      const t = now();
      if (++takes % PRUNE_EVERY === 0) prune(t);
      const b = buckets.get(key) ?? { tokens: rate, at: t };
      b.tokens = Math.min(rate, b.tokens + ((t - b.at) / 1000) * rate);
      b.at = t;
      buckets.set(key, b);
      const decision = (remaining: number): RateDecision => ({ limit: rate, remaining, reset: Math.ceil((rate - b.tokens) / rate) });
      if (b.tokens < 1) {
        const retryAfterSeconds = Math.max(1, Math.ceil((1 - b.tokens) / rate));
        throw new AppError('rate_limited', 'Rate limit exceeded', { retryAfterSeconds, rate: decision(0) });
      }
      b.tokens -= 1;
      return decision(Math.floor(b.tokens));
    },
  };
}
export type RateLimiter = ReturnType<typeof createRateLimiter>;
