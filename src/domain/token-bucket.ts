/**
 * The token bucket of the rate limit, as pure arithmetic: `rate` tokens a second, holding at most `rate`
 * (the burst). The in-process buckets (memory-buckets.ts) run it in JavaScript; the shared ones
 * (rate-buckets-repo.ts) run the same arithmetic in one SQL statement.
 */

export interface Bucket {
  tokens: number;
  /** When `tokens` was counted, in ms. */
  at: number;
}

/** What a lease of tokens from a bucket answered: how many were handed out, and what the bucket holds after. */
export interface BucketLease {
  granted: number;
  /** Tokens left in the bucket after the lease (fractional: it refills continuously). */
  tokens: number;
}

/** Where buckets live: this process's memory or a table every process shares. */
export interface BucketStore {
  /** Takes up to `want` whole tokens (fewer if the bucket holds fewer, none when it holds less than one). */
  lease(key: string, want: number, rate: number): Promise<BucketLease>;
}

/** The bucket at `t`: refilled since it was last counted, never above `rate`. A new bucket is full. */
export function refill(bucket: Bucket | undefined, rate: number, t: number): Bucket {
  if (!bucket) return { tokens: rate, at: t };
  const at = Math.max(t, bucket.at);
  return { tokens: Math.min(rate, bucket.tokens + ((at - bucket.at) / 1000) * rate), at };
}

/** Refills add up fractions: 0.9999999999999925 is a whole token that rounding lost. */
export const WHOLE_TOKEN_SLACK = 1e-9;

/** Takes up to `want` whole tokens from a refilled bucket. */
export function take(bucket: Bucket, want: number): { bucket: Bucket; granted: number } {
  const granted = Math.max(0, Math.min(want, Math.floor(bucket.tokens + WHOLE_TOKEN_SLACK)));
  return { bucket: { tokens: bucket.tokens - granted, at: bucket.at }, granted };
}

/** Seconds until a bucket holding `tokens` is full again (RateLimit-Reset). */
export function secondsUntilFull(tokens: number, rate: number): number {
  return Math.max(0, Math.ceil((rate - tokens) / rate));
}
