import type { BounceType } from './events.js';

/**
 * What a permanent refusal (a 5xx reply, or a DSN's 5.x.x status) says about the recipient, read from its
 * enhanced status code (RFC 3463 and the IANA registry) as receivers mean it, not from its class digit alone:
 *
 * - `recipient`: the address is gone or wrong (5.1.1 no such user, 5.1.2 no such domain, 5.2.1 disabled...).
 *   Not retried; a Permanent bounce that suppresses the address.
 * - `retry`: the recipient's mailbox or system is out of room for now (5.2.2 mailbox full, 5.3.1 system full,
 *   over-quota wording without a code). Gmail answers a full inbox 552 5.2.2, Microsoft 5.2.2, Yahoo 554
 *   "This account is over quota"; all three clear once the owner makes room, and SES files them as Transient
 *   (MailboxFull). Retried on the usual budget; when it is spent, a Transient bounce with no suppression.
 * - `message`: this message or its sender is refused, not the address: policy and reputation blocks (5.7.x:
 *   spam, blocklisted IP, DMARC/SPF/PTR failures), content and size (5.6.x, 5.3.4, 5.2.3), protocol (5.5.x),
 *   our own sender address (5.1.7, 5.1.8). Retrying the same bytes from the same address would only be
 *   refused again, so not retried; but the recipient may well take another message, so, as SES (Transient
 *   ContentRejected / MessageTooLarge) and Postmark (Blocked, which leaves the address active) do, a
 *   Transient bounce with no suppression. It still counts against the account's bounce rate.
 *
 * A 5.x.x code not listed keeps the RFC's default for class 5: `recipient`.
 */
export type RefusalClass = 'recipient' | 'retry' | 'message';

/** By `subject.detail` (the class is 5 wherever this table is read). An entry `subject.*` covers the subject. */
const TABLE: Record<string, RefusalClass> = {
  // X.1 Addressing: the recipient's address, except X.1.7 and X.1.8, which are about the sender's.
  '1.*': 'recipient',
  '1.7': 'message', // bad sender's mailbox address syntax
  '1.8': 'message', // bad sender's system address (e.g. Microsoft 5.1.8 "bad outbound sender")
  // X.2 Mailbox
  '2.*': 'recipient', // 2.0 other, 2.1 disabled, 2.4 mailing list expansion
  '2.2': 'retry', // mailbox full
  '2.3': 'message', // message length exceeds administrative limit
  // X.3 Mail system
  '3.1': 'retry', // mail system full (RFC 3463: "probably a transient error")
  '3.3': 'message', // system not capable of selected features
  '3.4': 'message', // message too big for system
  // X.4 Network and routing: 4.1 (Microsoft's "Recipient address rejected: Access denied", an unknown user) and
  // 4.4 (unable to route) stay `recipient`.
  '4.3': 'retry', // directory server failure (RFC 3463: "useful only as a persistent transient error")
  '4.5': 'retry', // mail system congestion
  '4.7': 'message', // delivery time expired: a relay gave up on a temporary failure; nothing says the address is bad
  // X.5 Protocol: how the message was sent
  '5.*': 'message',
  '5.3': 'retry', // too many recipients: RFC 5321 4.5.3.1.10 says treat it as temporary; the rest go on a retry
  // X.6 Content and media
  '6.*': 'message',
  // X.7 Security and policy: the sender or the message is blocked, not the address...
  '7.*': 'message',
  // ...except the address's owner has changed (RFC 7293 Require-Recipient-Valid-Since): it is someone else's now.
  '7.17': 'recipient',
  '7.18': 'recipient',
};

/**
 * A mailbox out of room, in the words servers use when they give no specific code (Yahoo's 554 "over quota",
 * RFC 5321's 552 "exceeded storage allocation").
 */
const NO_ROOM =
  /over ?quota|quota (exceeded|full)|exceeds? (its |the )?quota|(mail ?box|inbox) (is )?full|out of (storage|space)|insufficient (system )?storage|exceeded storage allocation/i;

/** The class of a permanent refusal with enhanced `status` (e.g. 5.2.2) and the server's words `reply`. */
export function refusalClass(status: string, reply = ''): RefusalClass {
  const code = /^[245]\.(\d{1,3})\.(\d{1,3})$/.exec(status.trim());
  const subject = code ? Number(code[1]) : 0;
  const detail = code ? Number(code[2]) : 0;
  // X.0.0 (or no code at all) says nothing specific: the words may.
  if (subject === 0 && detail === 0) return NO_ROOM.test(reply) ? 'retry' : 'recipient';
  return TABLE[`${subject}.${detail}`] ?? TABLE[`${subject}.*`] ?? 'recipient';
}

/**
 * The bounce type a failure with `status` is recorded as (a refusal during delivery, or a DSN's status):
 * Permanent only for a dead address; any 4.x.x, and a 5.x.x that is not about the address, is Transient.
 */
export function bounceTypeOf(status: string, reply = ''): BounceType {
  return !status.trim().startsWith('4') && refusalClass(status, reply) === 'recipient' ? 'Permanent' : 'Transient';
}
