import crypto from 'node:crypto';

/**
 * The proof a complaint or bounce report came back for an email this service sent: a token naming the
 * email, signed with a key only the service has. Every outgoing message carries it in its
 * `X-Mail-Report-Token` header (which reports quote) and in its envelope sender (return-path.ts), so a
 * report can name only an email whose message its sender has actually seen.
 *
 * A token is `<email id>-<mac>`, or `<email id>.<recipient>-<mac>` for one recipient's copy: the mac is
 * HMAC-SHA256 of what precedes it under the report key, truncated to MAC_BYTES and written in lower-case
 * base32. The header token is shared by every recipient of a message, so it proves the email but not who
 * reports; a recipient's token travels only in the envelope of that recipient's copy. Everything in it is lower case, because a token travels as
 * the local part of an address and some mail servers change the case of those.
 */
export interface ReportTokens {
  /** The token of an email: what its message's `X-Mail-Report-Token` header carries (one copy for every recipient). */
  sign(emailId: string): string;
  /**
   * The token of one recipient's copy of an email, the `recipient`th of its recipients (delivery-outcome.ts
   * `recipientsOf`): what that recipient's envelope sender carries, so a report that comes back to it can speak
   * for that recipient only.
   */
  signRecipient(emailId: string, recipient: number): string;
  /** What a token proves, or undefined when this service did not sign it (compared in constant time). */
  verify(token: string): ReportProof | undefined;
}

/** The email a token names and, for a recipient's token, which recipient's copy carried it. */
export interface ReportProof {
  emailId: string;
  recipient?: number;
}

/** The header every outgoing message carries its token in. */
export const REPORT_TOKEN_HEADER = 'X-Mail-Report-Token';

/** 120 bits: far beyond guessing, and the address stays within SMTP's 64-character local part. */
const MAC_BYTES = 15;
const MAC_CHARS = Math.ceil((MAC_BYTES * 8) / 5);
/** Email ids are `em_` and a 26-character ULID; anything much longer is no email id of ours. */
export const MAX_TOKEN_EMAIL_ID_CHARS = 37;
export const MAX_TOKEN_CHARS = MAX_TOKEN_EMAIL_ID_CHARS + 3 + 1 + MAC_CHARS;
const EMAIL_ID = /^[a-z0-9_]+$/;
/** At most 50 recipients an email (limits.ts): two digits. */
const RECIPIENT = /^(0|[1-9][0-9]?)$/;
const MAC = /^[a-z2-7]+$/;
/** Domain separation: the report key is derived from the link tracker's key and can sign nothing else. */
const KEY_PURPOSE = 'mailer report token key v1';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** RFC 4648 base32 in lower case, without padding. */
export function base32(bytes: Buffer): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** Tokens under a key derived from `secret` (the service's tracking key, kept in the settings table). */
export function createReportTokens(secret: Buffer | string): ReportTokens {
  if (Buffer.byteLength(secret) < 16) throw new Error('the report token secret must have at least 16 bytes');
  const key = crypto.createHmac('sha256', secret).update(KEY_PURPOSE).digest();
  const mac = (emailId: string) =>
    base32(crypto.createHmac('sha256', key).update(emailId).digest().subarray(0, MAC_BYTES));

  const subjectOf = (emailId: string) => {
    if (emailId.length > MAX_TOKEN_EMAIL_ID_CHARS || !EMAIL_ID.test(emailId))
      throw new Error(`not an email id: ${emailId}`);
    return emailId;
  };

  return {
    sign(emailId) {
      const subject = subjectOf(emailId);
      return `${subject}-${mac(subject)}`;
    },
    signRecipient(emailId, recipient) {
      if (!RECIPIENT.test(String(recipient))) throw new Error(`not a recipient index: ${recipient}`);
      const subject = `${subjectOf(emailId)}.${recipient}`;
      return `${subject}-${mac(subject)}`;
    },
    verify(token) {
      if (token.length > MAX_TOKEN_CHARS) return undefined;
      const lower = token.toLowerCase();
      const dash = lower.lastIndexOf('-');
      const subject = lower.slice(0, dash);
      const given = lower.slice(dash + 1);
      const dot = subject.indexOf('.');
      const emailId = dot < 0 ? subject : subject.slice(0, dot);
      const recipient = dot < 0 ? undefined : subject.slice(dot + 1);
      if (
        dash < 1 ||
        given.length !== MAC_CHARS ||
        !EMAIL_ID.test(emailId) ||
        emailId.length > MAX_TOKEN_EMAIL_ID_CHARS ||
        !MAC.test(given)
      )
        return undefined;
      if (recipient !== undefined && !RECIPIENT.test(recipient)) return undefined;
      if (!crypto.timingSafeEqual(Buffer.from(given), Buffer.from(mac(subject)))) return undefined;
      return recipient === undefined ? { emailId } : { emailId, recipient: Number(recipient) };
    },
  };
}
