import { formatMailbox, type Mailbox } from './address.js';
import { newId } from '../ids.js';
import type { EventType } from './catalog.js';
import type { InboundEventData } from './entities/inbound.js';

/**
 * What each event carries: the spec's `data` per event type, built once here and stored with the event,
 * so the timeline an operator reads and the webhook a sender receives are the same record.
 */

export const BOUNCE_TYPES = ['Permanent', 'Transient'] as const;
export type BounceType = (typeof BOUNCE_TYPES)[number];

/**
 * `General`: the server refused the recipient. `Suppressed`: the service did not send because the address
 * is on the account's suppression list (it does not count against the account's bounce rate).
 */
export const BOUNCE_SUBTYPES = ['General', 'Suppressed'] as const;
export type BounceSubtype = (typeof BOUNCE_SUBTYPES)[number];

export interface BouncedRecipient {
  email_address: string;
  /** Enhanced status code (RFC 3463), e.g. 5.1.1. */
  status: string;
  diagnostic_code: string;
}

export interface EventData {
  send: Record<string, never>;
  /**
   * `tls_version` ("TLSv1.3"; null: plain text) and `tls_verified` (the certificate verified for the MX name) in
   * direct delivery only, where the service itself spoke to the recipient's server; absent in relay and catcher modes.
   */
  delivery: {
    processing_time_millis: number;
    recipients: string[];
    smtp_response: string;
    tls_version?: string | null;
    tls_verified?: boolean;
  };
  bounce: { bounce_type: BounceType; bounce_subtype: BounceSubtype; bounced_recipients: BouncedRecipient[] };
  complaint: { complaint_feedback_type: string; complained_recipients: string[] };
  reject: { reason: string };
  open: { timestamp: string; ip_address: string; user_agent: string };
  click: { timestamp: string; ip_address: string; user_agent: string; link: string };
  /** The recipient who unsubscribed and the email's topic (null: it had none, so every broadcast topic). */
  unsubscribe: { recipient: string; topic: string | null };
  /** The inbound email as the API shows it, its text, html and stripped_text cut at 1 MB (then `truncated: true`). */
  inbound: InboundEventData;
  /** On the email an inbound message answered: that message's id and its From address. */
  reply: { inbound_id: string; from: string };
}

/** An event about to be stored: its id, what happened, when, and its data. */
export interface NewEvent<T extends EventType = EventType> {
  id: string;
  type: T;
  at: Date;
  data: EventData[T];
}

export const event = <T extends EventType>(id: string, type: T, at: Date, data: EventData[T]): NewEvent<T> => ({
  id,
  type,
  at,
  data,
});

/** An address to put on the account's suppression list (lower case). */
export interface NewSuppression {
  id: string;
  address: string;
  reason: 'bounce' | 'complaint';
}

/** The suppressions of `addresses`: lower case, each once. */
export function suppressionsOf(addresses: string[], reason: NewSuppression['reason']): NewSuppression[] {
  return [...new Set(addresses.map((a) => a.toLowerCase()))].map((address) => ({
    id: newId('suppression'),
    address,
    reason,
  }));
}

/** The email as a webhook shows it. */
export interface EnvelopeEmail {
  id: string;
  messageId: string;
  from: Mailbox;
  to: Mailbox[];
  subject: string;
  sentAt: Date | null;
}

/** Payloads that carry the email's `sent_at` (spec: present in delivery, open and click; absent in bounce and complaint). */
const WITH_SENT_AT: ReadonlySet<string> = new Set(['send', 'delivery', 'open', 'click']);

/** A webhook request's body: the spec's envelope, with the event's stable `id` (also the events API's). */
export interface WebhookBody {
  /** The event's id; absent only in Verify's `test` request, which is no stored event. */
  id?: string;
  event: EventType | 'test';
  timestamp: string;
  /** The email the event is about; absent for an `inbound` event, which is about no email we sent. */
  email?: { id: string; message_id: string; from: string; to: string[]; subject: string; sent_at?: string };
  data: object;
}

/**
 * The spec's body envelope of a webhook request, which the events API (GET /events) answers too, so an
 * event reads the same whichever way it came. Verify's request has the event `test` and no id. An event
 * without an email (`inbound`: CONTRACT.md "Inbound mail") is `{id, event, timestamp, data}`, its data the
 * inbound email.
 */
export function webhookEnvelope(
  type: EventType | 'test',
  at: Date,
  email: EnvelopeEmail | undefined,
  data: object,
  id?: string,
): WebhookBody {
  return {
    ...(id === undefined ? {} : { id }),
    event: type,
    timestamp: at.toISOString(),
    ...(email === undefined
      ? {}
      : {
          email: {
            id: email.id,
            message_id: email.messageId,
            from: formatMailbox(email.from),
            to: email.to.map(formatMailbox),
            subject: email.subject,
            ...(WITH_SENT_AT.has(type) && email.sentAt ? { sent_at: email.sentAt.toISOString() } : {}),
          },
        }),
    data,
  };
}
