import { describe, expect, it } from 'vitest';
import { backlogSlope } from '../../bench/lib/backlog.js';

const at = (t: number, accepted: number, delivered: number) => ({ t, accepted, delivered });

describe('bench backlogSlope', () => {
  it('is the least-squares slope of accepted - delivered over the last window only', () => {
    // Backlog 0 for the first 10 s, then growing 50/s: the window of the last 20 s sees only the growth.
    const samples = Array.from({ length: 30 }, (_, i) => {
      const t = i + 1;
      return at(t, 500 * t, 500 * t - Math.max(0, t - 10) * 50);
    });
    expect(backlogSlope(samples, 20)).toBeCloseTo(50, 6);
  });

  it('is 0 for a steady backlog and NaN without two samples', () => {
    expect(backlogSlope([at(1, 100, 80), at(2, 200, 180), at(3, 300, 280)], 20)).toBeCloseTo(0, 6);
    expect(backlogSlope([at(1, 100, 80)], 20)).toBeNaN();
  });
});
