import type { Rate } from '../../domain/entities/egress.js';

/** The units a rate may be written in (only these: "600/min", never "600 per minute"). */
const UNITS: Record<string, number> = { s: 1000, min: 60_000, h: 3_600_000, d: 86_400_000 };

const RATE = /^([1-9][0-9]{0,8})\/(s|min|h|d)$/;

/** "600/min" -> {count: 600, perMs: 60000}; null when it is not a rate (the caller names the key). */
export function parseRate(text: string): Rate | null {
  const m = RATE.exec(text.trim());
  if (!m) return null;
  return { count: Number(m[1]), perMs: UNITS[m[2]!]! };
}

/** The rate as the rules file writes it ("600/min"); a period no unit fits is written in its largest whole unit. */
export function formatRate(rate: Rate): string {
  for (const unit of ['d', 'h', 'min', 's'] as const) {
    if (rate.perMs === UNITS[unit]) return `${rate.count}/${unit}`;
  }
  for (const unit of ['d', 'h', 'min', 's'] as const) {
    const per = UNITS[unit]!;
    if (rate.perMs % per === 0) return `${Math.round((rate.count * per) / rate.perMs)}/${unit}`;
  }
  return `${Math.round((rate.count * 1000) / rate.perMs)}/s`;
}

/** Messages per millisecond: how two rates compare (the lower is the stricter). */
export const perMs = (rate: Rate): number => rate.count / rate.perMs;

/** The stricter of two rates; null is no limit. */
export function lowerRate(a: Rate | null, b: Rate | null): Rate | null {
  if (!a) return b;
  if (!b) return a;
  return perMs(b) < perMs(a) ? b : a;
}

export const RATE_FORMAT = 'a count and a unit: "600/min" (units /s /min /h /d)';
