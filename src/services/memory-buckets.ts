import { refill, take, type Bucket, type BucketLease, type BucketStore } from '../domain/token-bucket.js';

/** Idle buckets are looked for every this many leases; a full one is dropped (a missing bucket is full). */
const PRUNE_EVERY = 10_000;

/**
 * Token buckets in this process's memory: the rate limiter's fallback while PostgreSQL cannot be reached,
 * and the store of tests that need no database.
 */
export function createMemoryBuckets(now: () => number = Date.now): BucketStore {
  const buckets = new Map<string, Bucket>();
  let leases = 0;

  function prune(t: number, rate: number): void {
    for (const [key, b] of buckets) if (refill(b, rate, t).tokens >= rate) buckets.delete(key);
  }

  return {
    async lease(key: string, want: number, rate: number): Promise<BucketLease> {
      const t = now();
      if (++leases % PRUNE_EVERY === 0) prune(t, rate);
      const { bucket, granted } = take(refill(buckets.get(key), rate, t), want);
      buckets.set(key, bucket);
      return { granted, tokens: bucket.tokens };
    },
  };
}
