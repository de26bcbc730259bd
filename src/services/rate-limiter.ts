import { isDatabaseUnavailable } from '../db/db-unavailable.js';
import type { RateDecision } from '../domain/rate-decision.js';
import { secondsUntilFull, type BucketLease, type BucketStore } from '../domain/token-bucket.js';
import { AppError } from '../errors.js';

/**
 * The per-key rate limit: a token bucket of `rate` requests a second (the key's own rate_limit where it has
 * one, at most the service's), bursts up to that rate, held in `store`
 * (PostgreSQL's rate_buckets, shared by every API process). So that most requests cost no round trip, a
 * process leases a few tokens at a time (`chunk`, 1/20 of the rate, or as many as requests are waiting
 * for) and spends them locally; it asks again when they are spent. Every token spent was first taken from
 * the shared bucket, so all processes together never admit more than the bucket allows plus what they
 * hold unspent: at most `chunk` each (5 % of the rate).
 *
 * A lease that gets nothing tells when a lease's worth of tokens is back, and until then the process
 * refuses that key without asking: a client hammering past its limit costs no queries, and one held at
 * its limit a round trip per lease. Requests refused in that wait (at most 1/20 s) leave their tokens in
 * the bucket for the next lease, so the admitted count over time stays the rate.
 *
 * While the store cannot be reached (PostgreSQL down, restarting), leases come from `fallback`, this
 * process's own buckets: requests are limited per process instead of refused for a reason that is not
 * theirs. The store is tried again a second later.
 */

/** The share of the rate a process leases at a time. */
const LEASE_FRACTION = 1 / 20;
/** After the store failed, how long to lease from the fallback before trying the store again. */
const STORE_RETRY_MS = 1000;
/** A key holding tokens is forgotten after this long without a request (its unspent tokens, at most `chunk`, lost). */
const IDLE_MS = 10_000;
const PRUNE_EVERY = 10_000;

export interface RateLimiterDeps {
  /** MAILER_RATE_LIMIT: every key's rate, unless its own is lower. */
  rate: number;
  store: BucketStore;
  /** Where tokens come from while `store` cannot be reached; without one, the failure is thrown (a 503). */
  fallback?: BucketStore | undefined;
  /** Tokens leased at a time (at most the key's rate); 1 makes every request a lease (exact, one round trip each). */
  chunk?: number | undefined;
  now?: () => number;
  /** Told when the store fails and the fallback takes over, and when the store answers again. */
  onStoreDown?: (err: unknown) => void;
  onStoreBack?: () => void;
}

/** What this process knows of a key: the tokens it holds and the shared bucket as its last lease left it. */
interface KeyState {
  /** The key's rate, and the tokens a lease asks for. */
  rate: number;
  chunk: number;
  held: number;
  shared: number;
  sharedAt: number;
  /** The shared bucket had less than one token: refuse until then without asking. */
  emptyUntil: number;
  usedAt: number;
  /** Requests of this key waiting for tokens: a lease asks for enough for all of them. */
  waiting: number;
  leasing?: Promise<void> | undefined;
}

export const leaseSize = (rate: number) => Math.max(1, Math.floor(rate * LEASE_FRACTION));

export function createRateLimiter(deps: RateLimiterDeps) {
  const { store } = deps;
  const now = deps.now ?? Date.now;
  const keys = new Map<string, KeyState>();
  let takes = 0;
  let storeDownUntil: number | undefined;

  async function leaseTokens(key: string, want: number, rate: number): Promise<BucketLease> {
    const t = now();
    if (!deps.fallback || storeDownUntil === undefined || t >= storeDownUntil) {
      try {
        const lease = await store.lease(key, want, rate);
        if (storeDownUntil !== undefined) {
          storeDownUntil = undefined;
          deps.onStoreBack?.();
        }
        return lease;
      } catch (err) {
        if (!deps.fallback || !isDatabaseUnavailable(err)) throw err;
        if (storeDownUntil === undefined) deps.onStoreDown?.(err);
        storeDownUntil = now() + STORE_RETRY_MS;
      }
    }
    return deps.fallback!.lease(key, want, rate);
  }

  async function lease(key: string, s: KeyState): Promise<void> {
    // Requests that arrive in the same tick join before the lease says how many it wants: what the
    // waiting requests spend at once, so that no more than `chunk` stays unspent here.
    await Promise.resolve();
    const { rate, chunk } = s;
    const { granted, tokens } = await leaseTokens(key, Math.min(rate, Math.max(chunk, s.waiting)), rate);
    const t = now();
    s.held += granted;
    s.shared = tokens;
    s.sharedAt = t;
    // Asked again once a whole lease has come back, not each token: a key held at its limit then costs a
    // round trip per `chunk` admitted requests, not per request. (Never sooner than a millisecond: a bucket
    // a rounding error short of a token must not be asked again at once.)
    if (granted === 0) s.emptyUntil = t + Math.max(1, Math.ceil(((chunk - tokens) / rate) * 1000));
  }

  /** Where the key stands as far as this process knows: its tokens plus the shared bucket refilled since. */
  function decision(s: KeyState, t: number, remaining: boolean): RateDecision {
    const { rate } = s;
    const shared = Math.min(rate, s.shared + ((t - s.sharedAt) / 1000) * rate);
    const left = Math.min(rate, shared + s.held);
    return { limit: rate, remaining: remaining ? Math.floor(left) : 0, reset: secondsUntilFull(left, rate) };
  }

  function refusal(s: KeyState, t: number): AppError {
    const retryAfterSeconds = Math.max(1, Math.ceil((s.emptyUntil - t) / 1000));
    return new AppError('rate_limited', 'Rate limit exceeded', { retryAfterSeconds, rate: decision(s, t, false) });
  }

  function prune(t: number): void {
    for (const [key, s] of keys) {
      if (!s.leasing && t >= s.emptyUntil && (s.held < 1 || t - s.usedAt > IDLE_MS)) keys.delete(key);
    }
  }

  return {
    /**
     * Takes one request from `key`'s bucket, of `keyRate` requests a second when the key has a rate of its own
     * (never above the service's); throws a 429 saying when to retry when it is empty.
     */
    async take(key: string, keyRate?: number): Promise<RateDecision> {
      if (++takes % PRUNE_EVERY === 0) prune(now());
      const rate = keyRate === undefined ? deps.rate : Math.max(1, Math.min(keyRate, deps.rate));
      let s = keys.get(key);
      // A key's rate is fixed when it is made (no call changes it), so the state keeps the rate it began with.
      if (!s) {
        const chunk = Math.min(rate, deps.chunk ?? leaseSize(rate));
        keys.set(
          key,
          (s = { rate, chunk, held: 0, shared: rate, sharedAt: now(), emptyUntil: 0, usedAt: now(), waiting: 0 }),
        );
      }
      // Each round either spends a token, refuses, or waits for a lease (one at a time per key, shared by
      // every request waiting for it); a lease either brings tokens or sets emptyUntil, so this ends.
      for (;;) {
        const t = now();
        s.usedAt = t;
        if (s.held >= 1) {
          s.held -= 1;
          return decision(s, t, true);
        }
        if (t < s.emptyUntil) throw refusal(s, t);
        const state = s;
        s.waiting++;
        try {
          s.leasing ??= lease(key, state).finally(() => (state.leasing = undefined));
          await s.leasing;
        } finally {
          s.waiting--;
        }
      }
    },
  };
}
export type RateLimiter = ReturnType<typeof createRateLimiter>;
