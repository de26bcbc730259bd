import type { WarmupPlan } from '../../domain/entities/egress.js';

const DAY_MS = 86_400_000;

/** The UTC day of `at`, YYYY-MM-DD. */
export const utcDay = (at: Date): string => at.toISOString().slice(0, 10);

/** Milliseconds from `at` to the next UTC midnight (when a new day's allowance starts). */
export const msToNextUtcDay = (at: Date): number => DAY_MS - (at.getTime() % DAY_MS);

/**
 * How many messages a source address with `plan` may send on the UTC day `day`: daily[0] on the plan's start
 * day, daily[1] the next...; nothing before the start; no limit (null) after the list or without a plan.
 */
export function warmupAllowance(plan: WarmupPlan | null, day: string): number | null {
  if (!plan) return null;
  const index = Math.round((Date.parse(`${day}T00:00:00Z`) - Date.parse(`${plan.start}T00:00:00Z`)) / DAY_MS);
  if (index < 0) return 0;
  return index < plan.daily.length ? plan.daily[index]! : null;
}
