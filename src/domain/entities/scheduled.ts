import type { ScheduledStatus } from '../catalog.js';
import type { Mailbox } from '../address.js';
import type { LoadedEmail } from './delivery.js';

export interface UpcomingEmail {
  scheduledId: string;
  /** The email firing will create, as delivery loads it (with the id it is to have). */
  loaded: LoadedEmail;
}

export interface ScheduledRow {
  id: string;
  accountId: string;
  from: Mailbox;
  to: Mailbox[];
  subject: string;
  scheduledAt: Date;
  status: ScheduledStatus;
  attempts: number;
  emailId: string | null;
  createdAt: Date;
}

export type CancelOutcome = 'cancelled' | 'already_cancelled' | 'already_sent' | 'not_found';
