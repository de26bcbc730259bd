import { describe, expect, it } from 'vitest';
import { budgetScale, BUDGET_REFERENCE_SIGNED_PER_S, MAX_BUDGET_SCALE } from '../../bench/lib/settings.js';

describe("the bench's time budget on a slower machine", () => {
  it('stretches by how much slower the signed baseline is than the one the budget is sized for', () => {
    expect(budgetScale(BUDGET_REFERENCE_SIGNED_PER_S)).toBe(1);
    expect(budgetScale(BUDGET_REFERENCE_SIGNED_PER_S / 2)).toBe(2);
    expect(budgetScale(BUDGET_REFERENCE_SIGNED_PER_S / 1.25)).toBeCloseTo(1.25, 10);
  });

  it('never shrinks below the plan, never stretches past its cap, and keeps the plan without a baseline', () => {
    expect(budgetScale(BUDGET_REFERENCE_SIGNED_PER_S * 3)).toBe(1);
    expect(budgetScale(10)).toBe(MAX_BUDGET_SCALE);
    expect(budgetScale(undefined)).toBe(1);
    expect(budgetScale(0)).toBe(1);
    expect(budgetScale(Number.NaN)).toBe(1);
  });
});
