import { AppError } from '../errors.js';

/** The daily quota resets at 00:00 UTC; usage is counted per UTC day in which a request was accepted. */

export function utcDay(now: Date): string {
  return now.toISOString().slice(0, 10);
}

export function nextUtcMidnight(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
}

/** The spec's exact 429 body: `{error: "daily quota exceeded (<used>/<total>), resets at <timestamp>"}`. */
export function quotaExceeded(used: number, total: number, now: Date): AppError {
  const resetsAt = nextUtcMidnight(now);
  const text = `daily quota exceeded (${used}/${total}), resets at ${resetsAt.toISOString()}`;
  const retryAfterSeconds = Math.max(1, Math.ceil((resetsAt.getTime() - now.getTime()) / 1000));
  return new AppError('quota_exceeded', text, { errorText: text, retryAfterSeconds });
}

/** A key's own daily quota (its daily_quota) refused the send: the same 429 and reset, naming the key's quota. */
export function keyQuotaExceeded(used: number, total: number, now: Date): AppError {
  const resetsAt = nextUtcMidnight(now);
  const text = `API key daily quota exceeded (${used}/${total}), resets at ${resetsAt.toISOString()}`;
  const retryAfterSeconds = Math.max(1, Math.ceil((resetsAt.getTime() - now.getTime()) / 1000));
  return new AppError('quota_exceeded', text, { errorText: text, retryAfterSeconds });
}
