import { describe, expect, it } from 'vitest';
import type { KeyPrincipalRow } from '../../src/domain/entities/api-keys.js';
import { keyQuotaExceeded } from '../../src/domain/quota.js';
import { AppError } from '../../src/errors.js';
import { keyLimits } from '../../src/services/api-keys-service.js';
import { createAuthService } from '../../src/services/auth-service.js';
import { createAuthThrottle } from '../../src/services/auth-throttle.js';
import { createMemoryBuckets } from '../../src/services/memory-buckets.js';
import { createRateLimiter } from '../../src/services/rate-limiter.js';
import { generateApiKey } from '../../src/services/secrets.js';

const NOW = new Date('2026-03-01T12:00:00.000Z');
const BOUNDS = { maxRateLimit: 100, accountDailyQuota: 1000, now: NOW };

function refusal(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('keyLimits', () => {
  it('absent fields are no limits of its own', () => {
    expect(keyLimits({}, BOUNDS)).toEqual({ rateLimit: null, dailyQuota: null, expiresAt: null });
  });

  it('takes limits within the bounds, and an expiry with a zone in the future', () => {
    expect(keyLimits({ rateLimit: 100, dailyQuota: 0, expiresAt: '2026-03-01T14:00:00+01:00' }, BOUNDS)).toEqual({
      rateLimit: 100,
      dailyQuota: 0,
      expiresAt: new Date('2026-03-01T13:00:00.000Z'),
    });
    expect(keyLimits({ rateLimit: 1, dailyQuota: 1000, expiresAt: '2026-03-01T12:00:01Z' }, BOUNDS)).toEqual({
      rateLimit: 1,
      dailyQuota: 1000,
      expiresAt: new Date('2026-03-01T12:00:01.000Z'),
    });
  });

  it.each([
    [{ rateLimit: 0 }, /^rate_limit must be from 1 to 100 requests per second .*; got 0$/],
    [{ rateLimit: 101 }, /^rate_limit must be from 1 to 100 .*; got 101$/],
    [{ dailyQuota: -1 }, /^daily_quota must be from 0 to 1000 emails a day \(the account's daily_quota\); got -1$/],
    [{ dailyQuota: 1001 }, /^daily_quota must be from 0 to 1000 .*; got 1001$/],
    [{ expiresAt: '2026-03-01T12:00:00Z' }, /^expires_at: 2026-03-01T12:00:00.000Z is not in the future$/],
    [{ expiresAt: '2026-03-01T13:00:00+02:00' }, /^expires_at: 2026-03-01T11:00:00.000Z is not in the future$/],
    [{ expiresAt: '2026-03-02T00:00:00' }, /^expires_at: "2026-03-02T00:00:00" is not an ISO 8601 time with a zone/],
    [{ expiresAt: '2026-02-30T00:00:00Z' }, /^expires_at: .* is not an ISO 8601 time/],
  ])('%j is a 400 naming the field', (input, message) => {
    const err = refusal(() => keyLimits(input, BOUNDS));
    expect(err.kind).toBe('validation');
    expect(err.message).toMatch(message);
  });
});

describe("a key's expiry at authentication", () => {
  const { key, hash } = generateApiKey();
  const row = (expiresAt: Date | null): KeyPrincipalRow => ({
    keyId: 'key_1',
    keyHash: hash,
    accountId: 'acc_1',
    permission: 'all',
    allowedDomains: [],
    accountStatus: 'healthy',
    dailyQuota: 1000,
    rateLimit: 5,
    keyDailyQuota: 20,
    expiresAt,
    fingerprint: 'f1',
  });
  const auth = (expiresAt: Date | null, now: Date) =>
    createAuthService({
      findPrincipal: async () => row(expiresAt),
      adminToken: `adm_${'x'.repeat(40)}`,
      adminThrottle: createAuthThrottle({ perClient: 3, global: 5, windowMs: 60_000 }, () => 0),
      now: () => now,
    });

  it("is admitted before its expires_at with the key's own limits, refused 401 from that very moment on", async () => {
    const at = new Date('2026-03-01T12:00:02.000Z');
    await expect(auth(at, new Date(at.getTime() - 1)).authenticate(key)).resolves.toMatchObject({
      keyId: 'key_1',
      rateLimit: 5,
      keyDailyQuota: 20,
    });
    for (const now of [at, new Date(at.getTime() + 86_400_000)]) {
      const err = await auth(at, now)
        .authenticate(key)
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).status).toBe(401);
      expect((err as AppError).message).toBe('This API key expired at 2026-03-01T12:00:02.000Z');
    }
  });

  it('a key without limits nor expiry carries none', async () => {
    const a = createAuthService({
      findPrincipal: async () => ({ ...row(null), rateLimit: null, keyDailyQuota: null }),
      adminToken: `adm_${'x'.repeat(40)}`,
      adminThrottle: createAuthThrottle({ perClient: 3, global: 5, windowMs: 60_000 }, () => 0),
    });
    const p = await a.authenticate(key);
    expect('rateLimit' in p || 'keyDailyQuota' in p).toBe(false);
  });
});

describe("the rate limiter with a key's own rate", () => {
  const limiter = (t: { now: number }) =>
    createRateLimiter({ rate: 100, store: createMemoryBuckets(() => t.now), now: () => t.now });

  it("limits a key to its rate and reports it as the limit, other keys keep the service's", async () => {
    const t = { now: 1_000_000 };
    const rl = limiter(t);
    const a = await rl.take('key_a', 2);
    const b = await rl.take('key_a', 2);
    expect([a.limit, b.limit]).toEqual([2, 2]);
    const third = await rl.take('key_a', 2).then(
      () => undefined,
      (e: unknown) => e as AppError,
    );
    expect(third?.kind).toBe('rate_limited');
    expect(third?.rate?.limit).toBe(2);
    expect((await rl.take('key_b')).limit).toBe(100);
    t.now += 500;
    expect((await rl.take('key_a', 2)).limit).toBe(2);
  });

  it("never lets a key's rate exceed the service's", async () => {
    const rl = limiter({ now: 1_000_000 });
    expect((await rl.take('key_c', 500)).limit).toBe(100);
  });
});

describe('keyQuotaExceeded', () => {
  it("is the quota's 429 naming the key's quota, with the same reset", () => {
    const err = keyQuotaExceeded(5, 5, NOW);
    expect(err.status).toBe(429);
    expect(err.body()).toEqual({ error: 'API key daily quota exceeded (5/5), resets at 2026-03-02T00:00:00.000Z' });
    expect(err.retryAfterSeconds).toBe(12 * 3600);
  });
});
