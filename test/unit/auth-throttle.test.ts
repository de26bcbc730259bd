import { describe, expect, it } from 'vitest';
import { errorMetadata } from '../../src/api/error-metadata.js';
import { AppError } from '../../src/errors.js';
import { createAuthService } from '../../src/services/auth-service.js';
import { clientKey, createAuthThrottle, type ThrottleLimits } from '../../src/services/auth-throttle.js';

const LIMITS = { perClient: 3, global: 5, windowMs: 60_000 };
const TOKEN = `adm_${'r'.repeat(40)}`;
const guess = (i: number) => `adm_guess-${i}-${'x'.repeat(32)}`;

function refusal(fn: () => void): AppError | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
}

/** The admin check as the service wires it, over a throttle with `limits` and a clock the test moves. */
function adminAuth(limits: ThrottleLimits, clock: { t: number }) {
  const auth = createAuthService({
    findPrincipal: async () => undefined,
    adminToken: TOKEN,
    adminThrottle: createAuthThrottle(limits, () => clock.t),
  });
  return (token: string | undefined, client: string) => refusal(() => auth.authenticateAdmin(token, client));
}

describe('admin-token throttle', () => {
  it("answers a client's failures past its limit with 429 and Retry-After until the window ends", () => {
    let t = 1_000_000;
    const throttle = createAuthThrottle(LIMITS, () => t);
    for (let i = 0; i < LIMITS.perClient; i++) expect(throttle.failed('10.0.0.1')).toBeUndefined();
    t += 15_000;
    const err = throttle.failed('10.0.0.1');
    expect(err?.kind).toBe('rate_limited');
    expect(err?.status).toBe(429);
    expect(err?.body()).toEqual({
      error: 'too many requests',
      message: 'Too many failed admin token attempts from this address; retry in 45 s',
    });
    expect(errorMetadata(err!)['retry-after']).toBe('45');
    // Another address is not affected.
    expect(throttle.failed('10.0.0.2')).toBeUndefined();
    // The window ends: the client's failures count afresh.
    t += 45_000;
    expect(throttle.failed('10.0.0.1')).toBeUndefined();
  });

  it('answers every failure with 429 once all clients together pass the global limit', () => {
    let t = 0;
    const throttle = createAuthThrottle(LIMITS, () => t);
    for (let i = 0; i < LIMITS.global; i++) expect(throttle.failed(`10.0.1.${i}`)).toBeUndefined();
    t += 1_000;
    const err = throttle.failed('192.0.2.7');
    expect(err?.body().message).toBe('Too many failed admin token attempts on this server; retry in 59 s');
    expect(errorMetadata(err!)['retry-after']).toBe('59');
    t += 59_000;
    expect(throttle.failed('192.0.2.7')).toBeUndefined();
  });

  it('counts an IPv6 client by its /64 and an IPv4-mapped one as IPv4', () => {
    expect(clientKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:0db8:0001:0002:ffff:1:2:3')).toBe('2001:db8:1:2::/64');
    expect(clientKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
    expect(clientKey('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(clientKey('192.0.2.1')).toBe('192.0.2.1');
    const throttle = createAuthThrottle({ ...LIMITS, global: 100 }, () => 0);
    for (let i = 1; i <= LIMITS.perClient; i++) throttle.failed(`2001:db8:1:2::${i}`);
    expect(throttle.failed('2001:db8:1:2::ffff')?.status).toBe(429);
    expect(throttle.failed('2001:db8:1:3::1')).toBeUndefined();
  });
});

describe('the admin token check (auth-service with the throttle)', () => {
  it('accepts the right token from an address past its limit, and from anyone past the global limit', () => {
    const clock = { t: 0 };
    const check = adminAuth(LIMITS, clock);
    for (let i = 0; i < LIMITS.perClient; i++) expect(check(guess(i), '10.0.0.1')?.status).toBe(401);
    // The guesser's next wrong token is 429; the right token from the very same address passes.
    expect(check(guess(99), '10.0.0.1')?.status).toBe(429);
    expect(check(TOKEN, '10.0.0.1')).toBeUndefined();
    // And it clears nothing: the address's next wrong token is still 429.
    expect(check(guess(100), '10.0.0.1')?.status).toBe(429);

    // Every address past the global limit (5 failures in all, 5 made): wrong tokens are 429 everywhere,
    // the right one passes everywhere.
    expect(check(guess(0), '192.0.2.9')?.body().message).toMatch(
      /^Too many failed admin token attempts on this server; retry in \d+ s$/,
    );
    for (const client of ['10.0.0.1', '192.0.2.9', '2001:db8::1']) expect(check(TOKEN, client), client).toBeUndefined();
  });

  it('a flood of wrong tokens from the address every client shares (a reverse proxy) never refuses the right one', () => {
    const clock = { t: 0 };
    const check = adminAuth({ perClient: 20, global: 200, windowMs: 60_000 }, clock);
    for (let i = 0; i < 1_000; i++) check(guess(i), '172.18.0.5');
    expect(check(guess(1_000), '172.18.0.5')?.status).toBe(429);
    expect(check(TOKEN, '172.18.0.5')).toBeUndefined();
  });

  it('counts neither a missing token (no guess was made) nor the right one', () => {
    const check = adminAuth(LIMITS, { t: 0 });
    for (let i = 0; i < LIMITS.perClient + 5; i++) {
      expect(check(undefined, '10.0.0.4')?.status).toBe(401);
      expect(check(TOKEN, '10.0.0.4')).toBeUndefined();
    }
    for (let i = 0; i < LIMITS.perClient; i++) expect(check(guess(i), '10.0.0.4')?.status).toBe(401);
    expect(check(guess(99), '10.0.0.4')?.status).toBe(429);
  });

  it('does not grow with guesses from ever new addresses past the global limit', () => {
    const limits = { perClient: 3, global: 10, windowMs: 60_000 };
    const throttle = createAuthThrottle(limits, () => 0);
    for (let i = 0; i < 5_000; i++) throttle.failed(`2001:db8:${i.toString(16)}::1`);
    // The first 10 addresses were tracked; each later one is refused by the global limit alone.
    expect(throttle.trackedClients()).toBe(10);
    expect(throttle.failed('2001:db8:ffff::1')?.body().message).toMatch(/on this server/);
    expect(throttle.failed('2001:db8:0::2')?.body().message).toMatch(/on this server/);
  });
});
