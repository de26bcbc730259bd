import { describe, expect, it } from 'vitest';
import { errorMetadata } from '../../src/api/error-metadata.js';
import { AppError } from '../../src/errors.js';
import { createRateLimiter } from '../../src/services/rate-limiter.js';

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

function refusal(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected a 429');
}

describe('createRateLimiter', () => {
  it('lets a burst of `rate` requests through, counting down remaining', () => {
    const c = clock();
    const rl = createRateLimiter(5, c.now);
    expect([1, 2, 3, 4, 5].map(() => rl.take('k').remaining)).toEqual([4, 3, 2, 1, 0]);
    expect(rl.take.bind(null, 'k')).toThrow(AppError);
  });

  it('answers the 429 of the spec with Retry-After and RateLimit-* headers', () => {
    const c = clock();
    const rl = createRateLimiter(5, c.now);
    for (let i = 0; i < 5; i++) rl.take('k');
    const err = refusal(() => rl.take('k'));
    expect(err.status).toBe(429);
    expect(err.body()).toEqual({ error: 'too many requests', message: 'Rate limit exceeded' });
    expect(errorMetadata(err)).toEqual({ 'ratelimit-limit': '5', 'ratelimit-remaining': '0', 'ratelimit-reset': '1', 'retry-after': '1' });
  });

  it('refills at `rate` tokens a second', () => {
    const c = clock();
    const rl = createRateLimiter(10, c.now);
    for (let i = 0; i < 10; i++) rl.take('k');
    expect(() => rl.take('k')).toThrow();
    c.advance(99);
    expect(() => rl.take('k')).toThrow();
    c.advance(1);
    expect(rl.take('k').remaining).toBe(0);
    expect(() => rl.take('k')).toThrow();
    c.advance(500);
    expect(rl.take('k').remaining).toBe(4);
  });

  it('never holds more than `rate` tokens however long it was idle', () => {
    const c = clock();
    const rl = createRateLimiter(3, c.now);
    rl.take('k');
    c.advance(3_600_000);
    expect([1, 2, 3].map(() => rl.take('k').remaining)).toEqual([2, 1, 0]);
    expect(() => rl.take('k')).toThrow();
  });

  it('a refused request does not consume a token', () => {
    const c = clock();
    const rl = createRateLimiter(1, c.now);
    rl.take('k');
    for (let i = 0; i < 5; i++) expect(() => rl.take('k')).toThrow();
    c.advance(1000);
    expect(rl.take('k').remaining).toBe(0);
  });

  it('keeps one bucket per key', () => {
    const c = clock();
    const rl = createRateLimiter(2, c.now);
    rl.take('a');
    rl.take('a');
    expect(() => rl.take('a')).toThrow();
    expect(rl.take('b').remaining).toBe(1);
  });

  it('Retry-After is whole seconds until one token is back (slow rates wait longer)', () => {
    const c = clock();
    const rl = createRateLimiter(1, c.now);
    rl.take('k');
    c.advance(200);
    expect(errorMetadata(refusal(() => rl.take('k')))['retry-after']).toBe('1');
  });

  it('reports reset as the seconds until the bucket is full again', () => {
    const c = clock();
    const rl = createRateLimiter(4, c.now);
    expect(rl.take('k')).toEqual({ limit: 4, remaining: 3, reset: 1 });
    const fresh = createRateLimiter(4, c.now);
    for (let i = 0; i < 4; i++) fresh.take('x');
    expect(errorMetadata(refusal(() => fresh.take('x')))['ratelimit-reset']).toBe('1');
  });
});

describe('createRateLimiter', () => {
  it('forgets idle full buckets without changing answers (pruning)', () => {
    const c = clock();
    const rl = createRateLimiter(2, c.now);
    for (let i = 0; i < 10_001; i++) {
      rl.take(`key-${i}`);
      c.advance(1);
    }
    rl.take('hot');
    rl.take('hot');
    expect(() => rl.take('hot')).toThrow();
  });
});
