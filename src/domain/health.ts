import type { AccountStatus, Stream } from './catalog.js';
import type { JudgedCounts } from './entities/events.js';

/**
 * The account health policy (spec: Account health status). Rates are judged over the emails of the last
 * WINDOW_HOURS, counted from the account's last status change if that is later, so an account put back to
 * `healthy` by an operator or by recovery starts with a clean slate, and `review` judges only what was sent
 * since the warning. Below MIN_VOLUME emails nothing is judged: two bounces out of ten say little. The
 * account's whole mail is judged, and each stream's alone (CONTRACT.md, "Streams"): either at a threshold
 * moves the account.
 */
export const HEALTH_POLICY = {
  windowHours: 24,
  minVolume: 50,
  /** Bounces (not `Suppressed`) per email handed to a mail server, at or above which the account is judged. */
  bounceRate: 0.04,
  complaintRate: 0.0008,
  /**
   * Complaints alone never pause an account (`review` → `paused`) on fewer distinct complainants than this, however
   * high the rate: at small volumes one or two people (or one recipient mailing reports) reach 0.08 %.
   */
  minComplainantsToPause: 5,
  /** A `review` account returns to `healthy` after this long in review with no bounce or complaint. */
  recoveryHours: 24,
  /** The share of its quota an account keeps while in review. */
  reviewQuotaFactor: 0.5,
} as const;

const HOUR_MS = 3_600_000;

export interface HealthInput extends JudgedCounts {
  status: AccountStatus;
  statusChangedAt: Date;
  lastIssueAt: Date | null;
  now: Date;
  /**
   * The counts of each stream's mail alone, each judged like the whole: a broadcast complaint rate is judged
   * on broadcast mail, where plenty of transactional mail would hide it, and the reverse. Absent: the whole only.
   */
  byStream?: Partial<Record<Stream, JudgedCounts>> | undefined;
}

/** Where the judged counts start for an account whose status last changed at `statusChangedAt`. */
export function healthWindowStart(statusChangedAt: Date, now: Date): Date {
  const windowStart = new Date(now.getTime() - HEALTH_POLICY.windowHours * HOUR_MS);
  return statusChangedAt > windowStart ? statusChangedAt : windowStart;
}

export function rates(c: { sent: number; bounced: number; complained: number }): {
  bounceRate: number;
  complaintRate: number;
} {
  return c.sent === 0
    ? { bounceRate: 0, complaintRate: 0 }
    : { bounceRate: c.bounced / c.sent, complaintRate: c.complained / c.sent };
}

export function aboveThresholds(c: { sent: number; bounced: number; complained: number }): boolean {
  if (c.sent < HEALTH_POLICY.minVolume) return false;
  const r = rates(c);
  return r.bounceRate >= HEALTH_POLICY.bounceRate || r.complaintRate >= HEALTH_POLICY.complaintRate;
}

/** Whether counts above a threshold may pause: the bounce rate alone, or complaints from enough distinct people. */
function pausable(c: JudgedCounts): boolean {
  if (c.sent < HEALTH_POLICY.minVolume) return false;
  return rates(c).bounceRate >= HEALTH_POLICY.bounceRate || c.complainants >= HEALTH_POLICY.minComplainantsToPause;
}

/** The counts judged: the account's whole mail, then each stream's alone. */
const judged = (h: HealthInput): JudgedCounts[] => [
  h,
  ...Object.values(h.byStream ?? {}).filter((c) => c !== undefined),
];

/** Whether the whole mail or one stream's is at a threshold. */
export const anyAboveThresholds = (h: HealthInput): boolean => judged(h).some(aboveThresholds);

/**
 * The status the policy gives: `healthy` → `review` at a threshold, `review` → `paused` if it stays at one,
 * `review` → `healthy` after RECOVERY_HOURS without issues. `paused` and `banned` are left to operators.
 */
export function judgeHealth(h: HealthInput): AccountStatus {
  if (h.status === 'healthy') return anyAboveThresholds(h) ? 'review' : 'healthy';
  if (h.status !== 'review') return h.status;
  // The counts that are at a threshold must be the ones that may pause: a stream, or the whole.
  if (judged(h).some((c) => aboveThresholds(c) && pausable(c))) return 'paused';
  const recovery = HEALTH_POLICY.recoveryHours * HOUR_MS;
  const quietSince = h.lastIssueAt && h.lastIssueAt > h.statusChangedAt ? h.lastIssueAt : h.statusChangedAt;
  return h.now.getTime() - quietSince.getTime() >= recovery ? 'healthy' : 'review';
}
