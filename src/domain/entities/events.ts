import type { EventType, Stream } from '../catalog.js';
import type { FeedPosition } from '../event-cursor.js';
import type { EnvelopeEmail } from '../events.js';

export interface EventRow {
  id: string;
  emailId: string;
  accountId: string;
  type: EventType;
  data: Record<string, unknown>;
  createdAt: Date;
}

/** A counter of one UTC day: emails accepted (the quota used), then events of each type (send, delivery, ...). */
export type DayCounter =
  'accepted' | 'sent' | 'delivered' | 'bounced' | 'complained' | 'opened' | 'clicked' | 'unsubscribed';

/** One UTC day (YYYY-MM-DD) of an account's mail, as perDay reads it. */
export type DayCounts = { day: string } & Record<DayCounter, number>;

/** What the health policy counts of some of an account's mail. */
export interface JudgedCounts {
  /** Emails handed to a mail server (a `send` event). */
  sent: number;
  /** Emails with a bounce that counts (not `Suppressed`). */
  bounced: number;
  /** Emails with a complaint that counts (from a trusted feedback loop). */
  complained: number;
  /** The distinct recipients of those complaints. */
  complainants: number;
}

export interface HealthCounts extends JudgedCounts {
  /** The last counted bounce or complaint, if any. */
  lastIssueAt: Date | null;
  /** The same counts of each stream's mail alone (a broadcast complaint rate is judged on broadcast mail). */
  byStream: Record<Stream, JudgedCounts>;
}

/** One event of the feed with what its webhook body shows of the email (none for `inbound`), and its feed position. */
export interface FeedEvent {
  id: string;
  type: EventType;
  at: Date;
  data: Record<string, unknown>;
  email: EnvelopeEmail | undefined;
  position: FeedPosition;
}
