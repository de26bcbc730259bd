import { STREAMS, type Stream } from './catalog.js';

/**
 * Compliance at a glance (issue 25): per stream, the last 7 days' complaint and unsubscribe rates, with the
 * line Gmail and Yahoo draw for bulk senders (a spam complaint rate under 0.3 %). What it shows is for the
 * account's owner to act on; it moves nothing (account health is domain/health.ts, over its own window).
 */
export const COMPLIANCE = {
  windowDays: 7,
  /** Complaints per email handed over at or above which a stream is over the line. */
  complaintRateLimit: 0.003,
} as const;

/** One stream's mail in the window: emails handed over, emails complained about, recipients who unsubscribed. */
export interface StreamActivity {
  sent: number;
  complained: number;
  unsubscribed: number;
}

export interface StreamCompliance extends StreamActivity {
  stream: Stream;
  /** Per email handed over, 0 to 1 (0 when none was). */
  complaintRate: number;
  unsubscribeRate: number;
  /** The complaint rate is at or above COMPLIANCE.complaintRateLimit. */
  overComplaintLimit: boolean;
}

export interface Compliance {
  windowDays: number;
  complaintRateLimit: number;
  streams: StreamCompliance[];
}

const per = (n: number, sent: number) => (sent === 0 ? 0 : n / sent);

/** The figures of each stream, transactional then broadcast. */
export function complianceOf(activity: Record<Stream, StreamActivity>): Compliance {
  return {
    windowDays: COMPLIANCE.windowDays,
    complaintRateLimit: COMPLIANCE.complaintRateLimit,
    streams: STREAMS.map((stream) => {
      const a = activity[stream];
      const complaintRate = per(a.complained, a.sent);
      return {
        stream,
        ...a,
        complaintRate,
        unsubscribeRate: per(a.unsubscribed, a.sent),
        overComplaintLimit: a.sent > 0 && complaintRate >= COMPLIANCE.complaintRateLimit,
      };
    }),
  };
}
