import { describe, expect, it } from 'vitest';
import { errorMetadata } from '../../src/api/error-metadata.js';
import { AppError } from '../../src/errors.js';
import { clientKey, createAuthThrottle } from '../../src/services/auth-throttle.js';

const LIMITS = { perClient: 3, global: 5, windowMs: 60_000 };

function refusal(fn: () => void): AppError | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
}

describe('admin-token throttle', () => {
  it('refuses a client after its failures reach the limit, with Retry-After until the window ends', () => {
    let t = 1_000_000;
    const throttle = createAuthThrottle(LIMITS, () => t);
    for (let i = 0; i < LIMITS.perClient; i++) {
      expect(refusal(() => throttle.check('10.0.0.1'))).toBeUndefined();
      throttle.failed('10.0.0.1');
    }
    t += 15_000;
    const err = refusal(() => throttle.check('10.0.0.1'));
    expect(err?.kind).toBe('rate_limited');
    expect(err?.status).toBe(429);
    expect(err?.body()).toEqual({ error: 'too many requests', message: 'Too many failed admin token attempts from this address; retry in 45 s' });
    expect(errorMetadata(err!)['retry-after']).toBe('45');
    // Another address is not affected.
    expect(refusal(() => throttle.check('10.0.0.2'))).toBeUndefined();
    // The window ends: the client may try again.
    t += 45_000;
    expect(refusal(() => throttle.check('10.0.0.1'))).toBeUndefined();
  });

  it('a success forgets the client\'s earlier failures', () => {
    const throttle = createAuthThrottle(LIMITS, () => 0);
    throttle.failed('10.0.0.1');
    throttle.failed('10.0.0.1');
    throttle.succeeded('10.0.0.1');
    throttle.failed('10.0.0.1');
    throttle.failed('10.0.0.1');
    expect(refusal(() => throttle.check('10.0.0.1'))).toBeUndefined();
    throttle.failed('10.0.0.1');
    expect(refusal(() => throttle.check('10.0.0.1'))?.status).toBe(429);
  });

  it('refuses everyone once all clients together reach the global limit', () => {
    let t = 0;
    const throttle = createAuthThrottle(LIMITS, () => t);
    for (let i = 0; i < LIMITS.global; i++) throttle.failed(`10.0.1.${i}`);
    t += 1_000;
    const err = refusal(() => throttle.check('192.0.2.7'));
    expect(err?.body().message).toBe('Too many failed admin token attempts on this server; retry in 59 s');
    expect(errorMetadata(err!)['retry-after']).toBe('59');
    t += 59_000;
    expect(refusal(() => throttle.check('192.0.2.7'))).toBeUndefined();
  });

  it('counts an IPv6 client by its /64 and an IPv4-mapped one as IPv4', () => {
    expect(clientKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:0db8:0001:0002:ffff:1:2:3')).toBe('2001:db8:1:2::/64');
    expect(clientKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
    expect(clientKey('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(clientKey('192.0.2.1')).toBe('192.0.2.1');
    const throttle = createAuthThrottle(LIMITS, () => 0);
    for (let i = 1; i <= LIMITS.perClient; i++) throttle.failed(`2001:db8:1:2::${i}`);
    expect(refusal(() => throttle.check('2001:db8:1:2::ffff'))?.status).toBe(429);
    expect(refusal(() => throttle.check('2001:db8:1:3::1'))).toBeUndefined();
  });
});
