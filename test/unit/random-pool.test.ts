import { describe, expect, it } from 'vitest';
import { randomFraction, randomHex } from '../../src/random-pool.js';

describe('the pooled random source', () => {
  it('hands out hex of the asked size, never the same bytes twice, across refills of the pool', () => {
    // 1,000 x 8 bytes is two refills of the 4 KiB pool.
    const drawn = Array.from({ length: 1_000 }, () => randomHex(8));
    for (const hex of drawn) expect(hex).toMatch(/^[0-9a-f]{16}$/);
    expect(new Set(drawn).size).toBe(drawn.length);
    expect(randomHex(32)).toMatch(/^[0-9a-f]{64}$/);
    expect(randomHex(4096)).toHaveLength(8192);
  });

  it('refuses a size the pool cannot give whole', () => {
    for (const bytes of [0, -1, 1.5, 4097]) expect(() => randomHex(bytes)).toThrow(RangeError);
  });

  it('gives fractions in [0, 1) in steps of 1/256, spread over the range', () => {
    const drawn = Array.from({ length: 5_000 }, randomFraction);
    for (const x of drawn) {
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThan(1);
      expect(Number.isInteger(x * 256)).toBe(true);
    }
    // 5,000 bytes: each half of the range gets well over a third of them unless the source is broken.
    expect(drawn.filter((x) => x < 0.5).length).toBeGreaterThan(2_000);
    expect(drawn.filter((x) => x >= 0.5).length).toBeGreaterThan(2_000);
  });
});
