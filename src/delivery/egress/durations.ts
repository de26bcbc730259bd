const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

const DURATION = /^([1-9][0-9]{0,8})(s|m|h|d)$/;

/** "90s", "30m", "1h", "1d" -> milliseconds; null when it is not a duration (the caller names the key). */
export function parseDuration(text: string): number | null {
  const m = DURATION.exec(text.trim());
  if (!m) return null;
  return Number(m[1]) * UNITS[m[2]!]!;
}

export const DURATION_FORMAT = 'a count and a unit: "90s", "30m", "1h", "1d"';
