import type { AccountStatus } from '../catalog.js';
import type { NewEvent, NewSuppression } from '../events.js';
import type { EmailRow, StoredAttachment } from './emails.js';

/** A group of queue entries claimed together, for one workflow. */
export interface ClaimedGroup {
  groupId: string;
  ids: string[];
}

/**
 * What an attempt made of an email: `delivered` (a server accepted it), `bounced` (refused, rejected or
 * suppressed), or still `pending` for the `remaining` recipients some server asked to try again later.
 */
export interface DeliveryOutcome {
  id: string;
  status: 'delivered' | 'bounced' | 'pending';
  remaining?: string[];
  messageId?: string;
  response?: string;
  sentAt?: Date;
  error?: string;
  events: NewEvent[];
  suppress: NewSuppression[];
}

/** Who sends an email, as delivery needs to know it: may the account still send, and does its domain track. */
export interface SenderState {
  accountStatus: AccountStatus;
  openTracking: boolean;
  clickTracking: boolean;
}

/** A recipient's copy a server took (`250`), with its reply (and, in direct mode, the MX that gave it). */
export interface AnsweredCopy {
  address: string;
  response: string;
  mx?: string;
}

export interface LoadedEmail {
  email: EmailRow;
  attachments: StoredAttachment[];
  sender: SenderState;
  lastError: string;
  /** Copies an earlier attempt handed over but did not live to record (migration 0020): not to be sent again. */
  answered: AnsweredCopy[];
}

/** Copies of one email handed over by the attempt holding its lease (`token`), kept until its outcome. */
export interface AnsweredProgress {
  token: string;
  emailId: string;
  copies: AnsweredCopy[];
}

/** The delivery queue's size: entries waiting for a workflow, entries claimed by one, the oldest's age (0 when empty). */
export interface QueueStats {
  waiting: number;
  claimed: number;
  oldestAgeSeconds: number;
}

/** An attempt's outcome for one email, recorded only while `token` still holds the email's lease. */
export interface LeasedOutcome {
  token: string;
  outcome: DeliveryOutcome;
}
