import { describe, expect, it } from 'vitest';
import { errorMetadata } from '../../src/api/error-metadata.js';
import { nextUtcMidnight, quotaExceeded, utcDay } from '../../src/domain/quota.js';

describe('utcDay', () => {
  it('is the UTC calendar day, whatever the local time zone says', () => {
    expect(utcDay(new Date('2025-03-09T23:59:59.999Z'))).toBe('2025-03-09');
    expect(utcDay(new Date('2025-03-10T00:00:00.000Z'))).toBe('2025-03-10');
    expect(utcDay(new Date('2025-03-10T01:30:00+02:00'))).toBe('2025-03-09');
  });
});

describe('nextUtcMidnight', () => {
  it.each([
    ['2025-03-09T12:00:00.000Z', '2025-03-10T00:00:00.000Z'],
    ['2025-03-09T00:00:00.000Z', '2025-03-10T00:00:00.000Z'],
    ['2025-03-09T23:59:59.999Z', '2025-03-10T00:00:00.000Z'],
    ['2025-12-31T18:00:00.000Z', '2026-01-01T00:00:00.000Z'],
    ['2024-02-28T10:00:00.000Z', '2024-02-29T00:00:00.000Z'],
    ['2025-02-28T10:00:00.000Z', '2025-03-01T00:00:00.000Z'],
  ])('after %s is %s', (now, next) => {
    expect(nextUtcMidnight(new Date(now)).toISOString()).toBe(next);
  });
});

describe('quotaExceeded', () => {
  it("is the spec's 429 whose body carries only `error` with the numbers and the reset time", () => {
    const err = quotaExceeded(100, 100, new Date('2025-03-09T22:00:00.000Z'));
    expect(err.status).toBe(429);
    expect(err.kind).toBe('quota_exceeded');
    expect(err.body()).toEqual({ error: 'daily quota exceeded (100/100), resets at 2025-03-10T00:00:00.000Z' });
    expect(Object.keys(err.body())).toEqual(['error']);
  });

  it('says Retry-After in whole seconds until the reset, at least 1', () => {
    expect(errorMetadata(quotaExceeded(3, 3, new Date('2025-03-09T22:00:00.000Z')))['retry-after']).toBe('7200');
    expect(errorMetadata(quotaExceeded(3, 3, new Date('2025-03-09T23:59:59.500Z')))['retry-after']).toBe('1');
    expect(errorMetadata(quotaExceeded(3, 3, new Date('2025-03-09T23:59:59.999Z')))['retry-after']).toBe('1');
  });

  it('reports the used count it is given, also when over the total', () => {
    expect(quotaExceeded(7, 5, new Date('2025-03-09T00:00:00.000Z')).body().error).toBe(
      'daily quota exceeded (7/5), resets at 2025-03-10T00:00:00.000Z',
    );
  });
});
