import { usageError } from './base-command.js';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A duration like `90s`, `10m`, `1h30m`, `2d`, `1.5h` in milliseconds; throws a usage error otherwise. */
export function parseDuration(input: string, flag = '--in'): number {
  const text = input.trim();
  const part = /\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)/gy;
  let total = 0;
  let end = 0;
  for (let m = part.exec(text); m; m = part.exec(text)) {
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    end = part.lastIndex;
  }
  if (text === '' || end !== text.length)
    throw usageError(`${flag} must be a duration like 30s, 10m, 1h30m or 2d, got "${input}"`);
  if (total <= 0) throw usageError(`${flag} must be more than zero, got "${input}"`);
  return total;
}

/**
 * `scheduled_at` from `--at` (an ISO 8601 time, passed as written: the server checks it has a zone and
 * is in the future) or `--in` (a duration from now).
 */
export function scheduledAt(at: string | undefined, inDuration: string | undefined, now = Date.now()): string {
  if (inDuration !== undefined) return new Date(now + parseDuration(inDuration)).toISOString();
  if (at === undefined) throw usageError('give the send time with --at <ISO 8601 time> or --in <duration>');
  if (Number.isNaN(Date.parse(at)))
    throw usageError(`--at must be an ISO 8601 time like 2026-01-01T09:00:00Z, got "${at}"`);
  return at;
}
