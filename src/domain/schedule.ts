import { invalid } from '../errors.js';

/** How far ahead an email may be scheduled (a decision: the spec is silent; SES and Resend allow days). */
export const MAX_SCHEDULE_DAYS = 30;

// ISO 8601 date-time with seconds optional, fraction optional and an explicit zone (Z or ±hh:mm): a time
// without a zone would be read in the server's zone, which no caller means.
const ISO_8601 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}:?\d{2})$/;

/** Date.parse rolls impossible days over (2026-02-30 becomes March 2): refuse them instead. */
function isCalendarDate(raw: string): boolean {
  const [year, month, day] = raw.slice(0, 10).split('-').map(Number) as [number, number, number];
  return month >= 1 && month <= 12 && day >= 1 && day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** An ISO 8601 time with a zone (e.g. 2026-01-01T09:00:00Z), or undefined for anything else. */
export function parseZonedTime(raw: string): Date | undefined {
  const at = ISO_8601.test(raw) && isCalendarDate(raw) ? new Date(raw.toUpperCase()) : undefined;
  return at && !Number.isNaN(at.getTime()) ? at : undefined;
}

/** scheduled_at must parse as ISO 8601 and lie in the future (and within MAX_SCHEDULE_DAYS). */
export function parseScheduledAt(raw: string, now: Date): Date {
  if (raw === '') throw invalid('scheduled_at is required (ISO 8601, e.g. 2026-01-01T09:00:00Z)');
  const at = parseZonedTime(raw);
  if (!at) {
    throw invalid(
      `scheduled_at: "${raw.slice(0, 60)}" is not an ISO 8601 time with a zone (e.g. 2026-01-01T09:00:00Z)`,
    );
  }
  if (at.getTime() <= now.getTime()) throw invalid(`scheduled_at: ${at.toISOString()} is not in the future`);
  if (at.getTime() - now.getTime() > MAX_SCHEDULE_DAYS * 86_400_000) {
    throw invalid(`scheduled_at: ${at.toISOString()} is more than ${MAX_SCHEDULE_DAYS} days ahead`);
  }
  return at;
}
