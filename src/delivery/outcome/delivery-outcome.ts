import type { DeliveryOutcome } from '../../domain/entities/delivery.js';
import type { EmailRow } from '../../domain/entities/emails.js';
import { addressKey } from '../../domain/address.js';
import { refusalClass } from '../../domain/bounce-class.js';
import { type BounceType, type BouncedRecipient, event, type NewEvent, suppressionsOf } from '../../domain/events.js';
import { newId } from '../../ids.js';
import type { AcceptedRecipient, TransportResult } from '../transport/transport.js';

/**
 * The outcome of one delivery attempt as the email's new status, its events and the addresses to suppress.
 * Pure apart from fresh ids, so every rule of the event model is in this one file:
 *
 * - recipients a server accepted: `delivery`, one event per server reply (in direct mode each recipient
 *   domain's MX answers for its own); recipients refused for good: a Permanent `bounce` (and suppressed)
 *   when the refusal says the address is dead, a Transient one (not suppressed) when it refuses the message
 *   or its sender (policy, reputation, content: domain/bounce-class.ts);
 * - the first attempt that hands the message to any server also records `send`, once per email;
 * - recipients deferred (4xx, unreachable) while others were answered: the email stays `pending` with just
 *   those left to deliver (`remaining`), and later attempts send to them only;
 * - the retry budget spent on temporary failures: a Transient `bounce` of the recipients still remaining;
 * - every recipient suppressed: a `bounce` with subtype `Suppressed` and no `send` (nothing left the service);
 * - the account paused or banned before delivery: `reject`, and the email ends `bounced`.
 *
 * An email ends `delivered` when any server accepted it for any recipient (in this attempt or an earlier
 * one), else `bounced`.
 */

/** RFC 3463: "delivery time expired", what a Transient bounce says when the last reply gave no code. */
const EXPIRED_STATUS = '4.4.7';
const SUPPRESSED_DIAGNOSTIC = "not sent: the address is on the account's suppression list";

/**
 * Every recipient's address key (canonical, lower case: the form suppressions are kept in), each once, in the
 * order to, cc, bcc. A recipient's position here is what its copy's report token names (return-path.ts).
 */
export function recipientsOf(email: Pick<EmailRow, 'to' | 'cc' | 'bcc'>): string[] {
  return recipientKeysOf([...email.to, ...email.cc, ...email.bcc].map((m) => m.address));
}

/** recipientsOf, from the bare addresses of to, cc and bcc in that order (as the emails repo reads them for reports). */
export const recipientKeysOf = (addresses: string[]): string[] => [...new Set(addresses.map(addressKey))];

/** The recipients an attempt still has to deliver to: those left by an earlier partial attempt, else all. */
export function pendingRecipientsOf(email: Pick<EmailRow, 'to' | 'cc' | 'bcc' | 'remainingRecipients'>): string[] {
  return email.remainingRecipients ?? recipientsOf(email);
}

function bounceEvent(
  at: Date,
  type: BounceType,
  subtype: 'General' | 'Suppressed',
  recipients: BouncedRecipient[],
): NewEvent {
  return event(newId('event'), 'bounce', at, {
    bounce_type: type,
    bounce_subtype: subtype,
    bounced_recipients: recipients,
  });
}

const suppressedRecipients = (addresses: string[]): BouncedRecipient[] =>
  addresses.map((a) => ({ email_address: a, status: '5.1.1', diagnostic_code: SUPPRESSED_DIAGNOSTIC }));

/** No `send` event yet: no earlier attempt handed this email to a server. */
const firstHanding = (email: Pick<EmailRow, 'remainingRecipients'>) => email.remainingRecipients === null;

/** What the servers of one attempt answered, and who was left out as suppressed. */
export interface Attempt extends Pick<TransportResult, 'accepted' | 'refused' | 'deferred'> {
  handedAt: Date;
  answeredAt: Date;
  messageId: string;
  /** Recipients left out because they are suppressed. */
  suppressed: string[];
}

/**
 * One `delivery` event per distinct server reply and TLS, each naming the recipients it accepted (direct
 * delivery's recipients of one reply may have gone over connections of different TLS: the event says which).
 */
function deliveryEvents(email: EmailRow, a: Attempt): NewEvent[] {
  const groups = new Map<string, { response: string; tls: AcceptedRecipient['tls']; recipients: string[] }>();
  for (const r of a.accepted) {
    const key = JSON.stringify([r.response, r.tls ?? null]);
    const group = groups.get(key) ?? { response: r.response, tls: r.tls, recipients: [] };
    group.recipients.push(addressKey(r.address));
    groups.set(key, group);
  }
  return [...groups.values()].map(({ response, tls, recipients }) =>
    event(newId('event'), 'delivery', a.answeredAt, {
      processing_time_millis: Math.max(0, a.answeredAt.getTime() - email.createdAt.getTime()),
      recipients,
      smtp_response: response,
      ...(tls ? { tls_version: tls.version, tls_verified: tls.verified } : {}),
    }),
  );
}

/** An attempt in which some server answered for at least one recipient (the others may be deferred). */
export function attemptOutcome(email: EmailRow, a: Attempt): DeliveryOutcome {
  const events: NewEvent[] = firstHanding(email) ? [event(newId('event'), 'send', a.handedAt, {})] : [];
  events.push(...deliveryEvents(email, a));
  // Only a refusal that says the address is dead suppresses it; a blocked message or sender does not.
  const dead = a.refused.filter((r) => refusalClass(r.failure.status, r.failure.diagnostic) === 'recipient');
  const blocked = a.refused.filter((r) => !dead.includes(r));
  for (const [type, refused] of [
    ['Permanent', dead],
    ['Transient', blocked],
  ] as const) {
    if (refused.length === 0) continue;
    events.push(
      bounceEvent(
        a.answeredAt,
        type,
        'General',
        refused.map((r) => ({
          email_address: addressKey(r.address),
          status: r.failure.status,
          diagnostic_code: r.failure.diagnostic,
        })),
      ),
    );
  }
  if (a.suppressed.length > 0)
    events.push(bounceEvent(a.answeredAt, 'Permanent', 'Suppressed', suppressedRecipients(a.suppressed)));
  const suppress = suppressionsOf(
    dead.map((r) => r.address),
    'bounce',
  );
  const delivered = a.accepted.length > 0 || email.sentAt !== null;
  const firstAccepted = a.accepted[0];
  const common = {
    id: email.id,
    events,
    suppress,
    ...(firstAccepted
      ? { messageId: a.messageId, response: firstAccepted.response, sentAt: email.sentAt ?? a.answeredAt }
      : {}),
  };
  if (a.deferred.length > 0) {
    return {
      ...common,
      status: 'pending',
      remaining: a.deferred.map((d) => addressKey(d.address)),
      error: a.deferred[0]!.failure.diagnostic,
    };
  }
  if (delivered) return { ...common, status: 'delivered' };
  return { ...common, status: 'bounced', error: a.refused[0]?.failure.diagnostic ?? 'refused' };
}

/** The retry budget is spent: the last temporary failure becomes a Transient bounce of the recipients still remaining. */
export function transientBounceOutcome(
  email: EmailRow,
  at: Date,
  lastError: string,
  answered: AcceptedRecipient[] = [],
): DeliveryOutcome {
  // A 5xx retried as temporary (552 5.2.2 mailbox full) keeps its own status.
  const status = /\b([45]\.\d{1,3}\.\d{1,3})\b/.exec(lastError)?.[1] ?? EXPIRED_STATUS;
  const diagnostic = lastError === '' ? 'retry budget exhausted after temporary failures' : lastError;
  // Ids are time-ordered and events list in id order: `send` is made first.
  const send = firstHanding(email) ? [event(newId('event'), 'send', at, {})] : [];
  // Copies the last attempt handed over before it died (email-sender.ts keeps them) were delivered, not bounced.
  const handed = new Set(answered.map((a) => addressKey(a.address)));
  const deliveries = deliveryEvents(email, {
    accepted: answered,
    refused: [],
    deferred: [],
    handedAt: at,
    answeredAt: at,
    messageId: email.headerMessageId,
    suppressed: [],
  });
  const left = pendingRecipientsOf(email).filter((a) => !handed.has(a));
  const bounce =
    left.length === 0
      ? []
      : [
          bounceEvent(
            at,
            'Transient',
            'General',
            left.map((a) => ({ email_address: a, status, diagnostic_code: diagnostic })),
          ),
        ];
  const first = answered[0];
  return {
    id: email.id,
    // Delivered to some recipients by an earlier attempt: it stays delivered, with these ones bounced.
    status: email.sentAt === null && first === undefined ? 'bounced' : 'delivered',
    ...(first ? { messageId: email.headerMessageId, response: first.response, sentAt: email.sentAt ?? at } : {}),
    error: diagnostic,
    events: [...send, ...deliveries, ...bounce],
    suppress: [],
  };
}

export function suppressedOutcome(email: EmailRow, at: Date, addresses: string[]): DeliveryOutcome {
  return {
    id: email.id,
    status: 'bounced',
    error: SUPPRESSED_DIAGNOSTIC,
    events: [bounceEvent(at, 'Permanent', 'Suppressed', suppressedRecipients(addresses))],
    suppress: [],
  };
}

export function rejectedOutcome(email: EmailRow, at: Date, reason: string): DeliveryOutcome {
  return {
    id: email.id,
    status: 'bounced',
    error: reason,
    events: [event(newId('event'), 'reject', at, { reason })],
    suppress: [],
  };
}
