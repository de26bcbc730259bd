import { describe, expect, it } from 'vitest';
import { errorMetadata } from '../../src/api/error-metadata.js';
import type { BucketStore } from '../../src/domain/token-bucket.js';
import { AppError } from '../../src/errors.js';
import { createMemoryBuckets } from '../../src/services/memory-buckets.js';
import { createRateLimiter, leaseSize } from '../../src/services/rate-limiter.js';

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

/** A store that counts its leases (the round trips to PostgreSQL in production). */
function counted(store: BucketStore) {
  const calls = { n: 0 };
  return {
    calls,
    store: { lease: (key: string, want: number, rate: number) => (calls.n++, store.lease(key, want, rate)) },
  };
}

/**
 * A limiter of `rate` requests a second over one store, on a clock the test moves (`advance`). The store is
 * in memory (the shared PostgreSQL table has its own integration test); `process()` makes another limiter
 * over the same store, as a second API process.
 */
function limiter(rate: number, chunk?: number) {
  const c = clock();
  const { calls, store } = counted(createMemoryBuckets(c.now));
  const process = () => createRateLimiter({ rate, store, chunk, now: c.now });
  return { rl: process(), process, calls, ...c };
}

async function refusal(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected a 429');
}

const remainings = async (rl: { take(k: string): Promise<{ remaining: number }> }, n: number, key = 'k') => {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await rl.take(key)).remaining);
  return out;
};

describe('createRateLimiter: the token bucket', () => {
  it('lets a burst of `rate` requests through, counting down remaining', async () => {
    const { rl } = limiter(5);
    expect(await remainings(rl, 5)).toEqual([4, 3, 2, 1, 0]);
    await expect(rl.take('k')).rejects.toThrow(AppError);
  });

  it('answers the 429 of the spec with Retry-After and RateLimit-* headers', async () => {
    const { rl } = limiter(5);
    await remainings(rl, 5);
    const err = await refusal(rl.take('k'));
    expect(err.status).toBe(429);
    expect(err.body()).toEqual({ error: 'too many requests', message: 'Rate limit exceeded' });
    expect(errorMetadata(err)).toEqual({
      'ratelimit-limit': '5',
      'ratelimit-remaining': '0',
      'ratelimit-reset': '1',
      'retry-after': '1',
    });
  });

  it('refills at `rate` tokens a second', async () => {
    const { rl, ...c } = limiter(10);
    await remainings(rl, 10);
    await expect(rl.take('k')).rejects.toThrow();
    c.advance(99);
    await expect(rl.take('k')).rejects.toThrow();
    c.advance(1);
    expect((await rl.take('k')).remaining).toBe(0);
    await expect(rl.take('k')).rejects.toThrow();
    c.advance(500);
    expect((await rl.take('k')).remaining).toBe(4);
  });

  it('never holds more than `rate` tokens however long it was idle', async () => {
    const { rl, ...c } = limiter(3);
    await rl.take('k');
    c.advance(3_600_000);
    expect(await remainings(rl, 3)).toEqual([2, 1, 0]);
    await expect(rl.take('k')).rejects.toThrow();
  });

  it('a refused request does not consume a token', async () => {
    const { rl, ...c } = limiter(1);
    await rl.take('k');
    for (let i = 0; i < 5; i++) await expect(rl.take('k')).rejects.toThrow();
    c.advance(1000);
    expect((await rl.take('k')).remaining).toBe(0);
  });

  it('keeps one bucket per key', async () => {
    const { rl } = limiter(2);
    await remainings(rl, 2, 'a');
    await expect(rl.take('a')).rejects.toThrow();
    expect((await rl.take('b')).remaining).toBe(1);
  });

  it('Retry-After is whole seconds until one token is back (slow rates wait longer)', async () => {
    const { rl, ...c } = limiter(1);
    await rl.take('k');
    c.advance(200);
    expect(errorMetadata(await refusal(rl.take('k')))['retry-after']).toBe('1');
    const slow = limiter(1);
    await slow.rl.take('k');
    await refusal(slow.rl.take('k'));
    slow.advance(100);
    expect(errorMetadata(await refusal(slow.rl.take('k')))['retry-after']).toBe('1');
  });

  it('reports reset as the seconds until the bucket is full again', async () => {
    const { rl, process } = limiter(4);
    expect(await rl.take('k')).toEqual({ limit: 4, remaining: 3, reset: 1 });
    const other = process();
    await remainings(other, 3, 'x');
    await other.take('x');
    expect(errorMetadata(await refusal(other.take('x')))['ratelimit-reset']).toBe('1');
  });

  it('forgets idle keys without changing answers (pruning)', async () => {
    const { rl, ...c } = limiter(2);
    for (let i = 0; i < 10_001; i++) {
      await rl.take(`key-${i}`);
      c.advance(1);
    }
    await rl.take('hot');
    await rl.take('hot');
    await expect(rl.take('hot')).rejects.toThrow();
  });
});

describe('createRateLimiter: leasing tokens from the shared store', () => {
  it('leases 1/20 of the rate at a time: 100 requests at rate 100 cost 20 round trips, remaining still exact', async () => {
    expect([1, 5, 19, 20, 100, 1000].map(leaseSize)).toEqual([1, 1, 1, 1, 5, 50]);
    const { rl, calls } = limiter(100);
    expect(await remainings(rl, 100)).toEqual(Array.from({ length: 100 }, (_, i) => 99 - i));
    expect(calls.n).toBe(20);
    await expect(rl.take('k')).rejects.toThrow();
  });

  it('two processes share one bucket: together they get the burst once, and the rate, within their unspent leases', async () => {
    const { rl: a, process, ...c } = limiter(100);
    const b = process();
    let admitted = 0;
    const tryTake = (p: typeof a) =>
      p.take('k').then(
        () => admitted++,
        () => {},
      );
    // 3 s of 1,000 requests a second, split over both; the bucket allows 100 now and 100 a second.
    for (let ms = 0; ms < 3000; ms++) {
      await tryTake(ms % 2 === 0 ? a : b);
      c.advance(1);
    }
    const allowed = 100 + 100 * 3;
    expect(admitted).toBeLessThanOrEqual(allowed);
    // What is lost: what each process holds unspent at the end (a lease, 5 tokens), and what came back to the
    // bucket while they wait for a whole lease's worth before asking again.
    expect(admitted).toBeGreaterThanOrEqual(allowed - 3 * leaseSize(100));
  });

  it('concurrent requests of one key wait for one lease, of as many tokens as they are, rather than each asking', async () => {
    const { rl, calls } = limiter(100);
    const answers = await Promise.all(Array.from({ length: 10 }, () => rl.take('k')));
    expect(answers.map((d) => d.remaining).sort((x, y) => y - x)).toEqual([99, 98, 97, 96, 95, 94, 93, 92, 91, 90]);
    expect(calls.n).toBe(1);
    // And never more than the bucket holds: 200 at once get the 90 left, the rest are refused.
    const more = await Promise.allSettled(Array.from({ length: 200 }, () => rl.take('k')));
    expect(more.filter((r) => r.status === 'fulfilled')).toHaveLength(90);
    expect(calls.n).toBe(3);
  });

  it('once the shared bucket is empty, refusals until the next token cost no round trip', async () => {
    const { rl, calls, ...c } = limiter(10, 1);
    await remainings(rl, 10);
    const before = calls.n;
    for (let i = 0; i < 50; i++) await expect(rl.take('k')).rejects.toThrow();
    expect(calls.n).toBe(before + 1);
    c.advance(100);
    expect((await rl.take('k')).remaining).toBe(0);
  });

  it('a key held at its limit costs a round trip per lease, not per request', async () => {
    const { rl, calls, ...c } = limiter(100);
    let admitted = 0;
    // 2 s of a request every millisecond: 100 of the burst and 200 of the rate get through.
    for (let ms = 0; ms < 2000; ms++) {
      await rl.take('k').then(
        () => admitted++,
        () => {},
      );
      c.advance(1);
    }
    expect(admitted).toBeGreaterThanOrEqual(300 - 2 * leaseSize(100));
    expect(admitted).toBeLessThanOrEqual(300);
    // One lease per 5 admitted, and one that came back empty for each: not one per token (200) or request.
    expect(calls.n).toBeLessThanOrEqual(2 * Math.ceil(300 / leaseSize(100)));
  });
});

describe('createRateLimiter: PostgreSQL unreachable', () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

  function failing(c: ReturnType<typeof clock>) {
    const state = { down: true, calls: 0 };
    const shared = createMemoryBuckets(c.now);
    const store: BucketStore = {
      lease: async (key, want, rate) => {
        state.calls++;
        if (state.down) throw refused;
        return shared.lease(key, want, rate);
      },
    };
    return { state, store };
  }

  it("falls back to this process's own buckets, says so once, and goes back to the shared ones when it answers", async () => {
    const c = clock();
    const { state, store } = failing(c);
    const events: string[] = [];
    const rl = createRateLimiter({
      rate: 3,
      store,
      fallback: createMemoryBuckets(c.now),
      now: c.now,
      onStoreDown: (err) => events.push(`down ${(err as { code: string }).code}`),
      onStoreBack: () => events.push('back'),
    });
    // Still limited, by the process's own bucket; the store is not asked again for a second.
    expect(await remainings(rl, 3)).toEqual([2, 1, 0]);
    await expect(rl.take('k')).rejects.toThrow(AppError);
    expect(state.calls).toBe(1);
    expect(events).toEqual(['down ECONNREFUSED']);

    state.down = false;
    c.advance(1000);
    expect((await rl.take('k')).limit).toBe(3);
    expect(state.calls).toBe(2);
    expect(events).toEqual(['down ECONNREFUSED', 'back']);
  });

  it('without a fallback the failure is thrown (the API answers 503), and so is any error that is not an outage', async () => {
    const c = clock();
    await expect(createRateLimiter({ rate: 3, store: failing(c).store, now: c.now }).take('k')).rejects.toBe(refused);
    const bug = new Error('syntax error');
    const broken: BucketStore = {
      lease: async () => {
        throw bug;
      },
    };
    await expect(
      createRateLimiter({ rate: 3, store: broken, fallback: createMemoryBuckets(c.now), now: c.now }).take('k'),
    ).rejects.toBe(bug);
  });
});
