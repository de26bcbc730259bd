import { describe, expect, it } from 'vitest';
import { errorMetadata } from '../../src/api/error-metadata.js';
import { AppError } from '../../src/errors.js';
import { createRateLimiter } from '../../src/services/rate-limiter.js';

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

/** A limiter of `rate` requests a second, on a clock the test moves (`advance`). */
function limiter(rate: number) {
  const c = clock();
  return { rl: createRateLimiter(rate, c.now), ...c };
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
    const { rl } = limiter(5);
    expect([1, 2, 3, 4, 5].map(() => rl.take('k').remaining)).toEqual([4, 3, 2, 1, 0]);
    expect(rl.take.bind(null, 'k')).toThrow(AppError);
  });

  it('answers the 429 of the spec with Retry-After and RateLimit-* headers', () => {
    const { rl } = limiter(5);
    for (let i = 0; i < 5; i++) rl.take('k');
    const err = refusal(() => rl.take('k'));
    expect(err.status).toBe(429);
    expect(err.body()).toEqual({ error: 'too many requests', message: 'Rate limit exceeded' });
    expect(errorMetadata(err)).toEqual({ 'ratelimit-limit': '5', 'ratelimit-remaining': '0', 'ratelimit-reset': '1', 'retry-after': '1' });
  });

  it('refills at `rate` tokens a second', () => {
    const { rl, ...c } = limiter(10);
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
    const { rl, ...c } = limiter(3);
    rl.take('k');
    c.advance(3_600_000);
    expect([1, 2, 3].map(() => rl.take('k').remaining)).toEqual([2, 1, 0]);
    expect(() => rl.take('k')).toThrow();
  });

  it('a refused request does not consume a token', () => {
    const { rl, ...c } = limiter(1);
    rl.take('k');
    for (let i = 0; i < 5; i++) expect(() => rl.take('k')).toThrow();
    c.advance(1000);
    expect(rl.take('k').remaining).toBe(0);
  });

  it('keeps one bucket per key', () => {
    const { rl } = limiter(2);
    rl.take('a');
    rl.take('a');
    expect(() => rl.take('a')).toThrow();
    expect(rl.take('b').remaining).toBe(1);
  });

  it('Retry-After is whole seconds until one token is back (slow rates wait longer)', () => {
    const { rl, ...c } = limiter(1);
    rl.take('k');
    c.advance(200);
    expect(errorMetadata(refusal(() => rl.take('k')))['retry-after']).toBe('1');
  });

  it('reports reset as the seconds until the bucket is full again', () => {
    const { rl, ...c } = limiter(4);
    expect(rl.take('k')).toEqual({ limit: 4, remaining: 3, reset: 1 });
    const fresh = createRateLimiter(4, c.now);
    for (let i = 0; i < 4; i++) fresh.take('x');
    expect(errorMetadata(refusal(() => fresh.take('x')))['ratelimit-reset']).toBe('1');
  });
});

describe('createRateLimiter', () => {
  it('forgets idle full buckets without changing answers (pruning)', () => {
    const { rl, ...c } = limiter(2);
    for (let i = 0; i < 10_001; i++) {
      rl.take(`key-${i}`);
      c.advance(1);
    }
    rl.take('hot');
    rl.take('hot');
    expect(() => rl.take('hot')).toThrow();
  });
});
