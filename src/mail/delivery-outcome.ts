import type { DeliveryOutcome } from '../db/repos/email-deliveries-repo.js';
import type { EmailRow } from '../db/repos/emails-repo.js';
import { type BounceType, type BouncedRecipient, event, type NewEvent, suppressionsOf } from '../domain/events.js';
import { newId } from '../ids.js';
import type { SmtpFailure } from './smtp-outcome.js';

/**
 * The outcome of one delivery attempt as the email's new status, its events and the addresses to suppress.
 * Pure apart from fresh ids, so every rule of the event model is in this one file:
 *
 * - accepted by the server: `send` then `delivery`; recipients the server refused get a Permanent bounce
 *   event (and are suppressed) while the email, delivered to the others, ends `delivered`;
 * - refused permanently (5xx): `send` then a Permanent `bounce`; the email ends `bounced`;
 * - the retry budget spent on temporary failures: `send` then a Transient `bounce`;
 * - every recipient suppressed: a `bounce` with subtype `Suppressed` and no `send` (nothing left the service);
 * - the account paused or banned before delivery: `reject`, and the email ends `bounced`.
 */

/** RFC 3463: "delivery time expired", what a Transient bounce says when the last reply gave no code. */
const EXPIRED_STATUS = '4.4.7';
const SUPPRESSED_DIAGNOSTIC = 'not sent: the address is on the account\'s suppression list';

/** Every recipient's bare address in lower case (the form suppressions are kept in). */
export function recipientsOf(email: Pick<EmailRow, 'to' | 'cc' | 'bcc'>): string[] {
  const all = [...email.to, ...email.cc, ...email.bcc].map((m) => m.address.toLowerCase());
  return [...new Set(all)];
}

function bounceEvent(at: Date, type: BounceType, subtype: 'General' | 'Suppressed', recipients: BouncedRecipient[]): NewEvent {
  return event(newId('event'), 'bounce', at, { bounce_type: type, bounce_subtype: subtype, bounced_recipients: recipients });
}

const suppressedRecipients = (addresses: string[]): BouncedRecipient[] =>
  addresses.map((a) => ({ email_address: a, status: '5.1.1', diagnostic_code: SUPPRESSED_DIAGNOSTIC }));

export interface Accepted {
  handedAt: Date;
  acceptedAt: Date;
  messageId: string;
  response: string;
  accepted: string[];
  /** Recipients the server refused while accepting others. */
  refused: { address: string; failure: SmtpFailure }[];
  /** Recipients left out because they are suppressed. */
  suppressed: string[];
}

export function deliveredOutcome(email: EmailRow, a: Accepted): DeliveryOutcome {
  const events: NewEvent[] = [
    event(newId('event'), 'send', a.handedAt, {}),
    event(newId('event'), 'delivery', a.acceptedAt, {
      processing_time_millis: Math.max(0, a.acceptedAt.getTime() - email.createdAt.getTime()),
      recipients: a.accepted.map((r) => r.toLowerCase()),
      smtp_response: a.response,
    }),
  ];
  const hard = a.refused.filter((r) => r.failure.kind === 'hard');
  if (hard.length > 0) {
    events.push(bounceEvent(a.acceptedAt, 'Permanent', 'General', hard.map((r) => ({
      email_address: r.address.toLowerCase(), status: r.failure.status, diagnostic_code: r.failure.diagnostic,
    }))));
  }
  if (a.suppressed.length > 0) events.push(bounceEvent(a.acceptedAt, 'Permanent', 'Suppressed', suppressedRecipients(a.suppressed)));
  return {
    id: email.id, status: 'delivered', messageId: a.messageId, response: a.response, sentAt: a.acceptedAt, events,
    suppress: suppressionsOf(hard.map((r) => r.address), 'bounce'),
  };
}

/** A permanent refusal of the whole message, or of every recipient (`refused` names them when the server did). */
export function hardBounceOutcome(email: EmailRow, at: Date, failure: SmtpFailure, refused: { address: string; failure: SmtpFailure }[], sent: string[]): DeliveryOutcome {
  const recipients: BouncedRecipient[] = refused.length > 0
    ? refused.map((r) => ({ email_address: r.address.toLowerCase(), status: r.failure.status, diagnostic_code: r.failure.diagnostic }))
    : sent.map((address) => ({ email_address: address, status: failure.status, diagnostic_code: failure.diagnostic }));
  return {
    id: email.id,
    status: 'bounced',
    error: failure.diagnostic,
    events: [event(newId('event'), 'send', at, {}), bounceEvent(at, 'Permanent', 'General', recipients)],
    suppress: suppressionsOf(recipients.map((r) => r.email_address), 'bounce'),
  };
}

/** The retry budget is spent: the last temporary failure becomes a Transient bounce of every recipient. */
export function transientBounceOutcome(email: EmailRow, at: Date, lastError: string): DeliveryOutcome {
  const status = /\b(4\.\d{1,3}\.\d{1,3})\b/.exec(lastError)?.[1] ?? EXPIRED_STATUS;
  const diagnostic = lastError === '' ? 'retry budget exhausted after temporary failures' : lastError;
  return {
    id: email.id,
    status: 'bounced',
    error: diagnostic,
    events: [
      event(newId('event'), 'send', at, {}),
      bounceEvent(at, 'Transient', 'General', recipientsOf(email).map((a) => ({ email_address: a, status, diagnostic_code: diagnostic }))),
    ],
    suppress: [],
  };
}

export function suppressedOutcome(email: EmailRow, at: Date, addresses: string[]): DeliveryOutcome {
  return {
    id: email.id, status: 'bounced', error: SUPPRESSED_DIAGNOSTIC,
    events: [bounceEvent(at, 'Permanent', 'Suppressed', suppressedRecipients(addresses))], suppress: [],
  };
}

export function rejectedOutcome(email: EmailRow, at: Date, reason: string): DeliveryOutcome {
  return { id: email.id, status: 'bounced', error: reason, events: [event(newId('event'), 'reject', at, { reason })], suppress: [] };
}
