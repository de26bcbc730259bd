import crypto from 'node:crypto';

/**
 * The proof a complaint or bounce report came back for an email this service sent: a token naming the
 * email, signed with a key only the service has. Every outgoing message carries it in its
 * `X-Mail-Report-Token` header (which reports quote) and in its envelope sender (return-path.ts), so a
 * report can name only an email whose message its sender has actually seen.
 *
 * A token is `<email id>-<mac>`: the mac is HMAC-SHA256 of the email id under the report key, truncated to
 * MAC_BYTES and written in lower-case base32. Everything in it is lower case, because a token travels as
 * the local part of an address and some mail servers change the case of those.
 */
export interface ReportTokens {
  /** The token of an email. */
  sign(emailId: string): string;
  /** The email id a token names, or undefined when this service did not sign it (compared in constant time). */
  verify(token: string): string | undefined;
}

/** The header every outgoing message carries its token in. */
export const REPORT_TOKEN_HEADER = 'X-Mail-Report-Token';

/** 120 bits: far beyond guessing, and the address stays within SMTP's 64-character local part. */
const MAC_BYTES = 15;
const MAC_CHARS = Math.ceil((MAC_BYTES * 8) / 5);
/** Email ids are `em_` and a 26-character ULID; anything much longer is no email id of ours. */
export const MAX_TOKEN_EMAIL_ID_CHARS = 37;
export const MAX_TOKEN_CHARS = MAX_TOKEN_EMAIL_ID_CHARS + 1 + MAC_CHARS;
const EMAIL_ID = /^[a-z0-9_]+$/;
const MAC = /^[a-z2-7]+$/;
/** Domain separation: the report key is derived from the link tracker's key and can sign nothing else. */
const KEY_PURPOSE = 'mailer report token key v1';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** RFC 4648 base32 in lower case, without padding. */
function base32(bytes: Buffer): string {
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
  const mac = (emailId: string) => base32(crypto.createHmac('sha256', key).update(emailId).digest().subarray(0, MAC_BYTES));

  return {
    sign(emailId) {
      if (emailId.length > MAX_TOKEN_EMAIL_ID_CHARS || !EMAIL_ID.test(emailId)) throw new Error(`not an email id: ${emailId}`);
      return `${emailId}-${mac(emailId)}`;
    },
    verify(token) {
      if (token.length > MAX_TOKEN_CHARS) return undefined;
      const lower = token.toLowerCase();
      const dash = lower.lastIndexOf('-');
      const emailId = lower.slice(0, dash);
      const given = lower.slice(dash + 1);
      if (dash < 1 || given.length !== MAC_CHARS || !EMAIL_ID.test(emailId) || emailId.length > MAX_TOKEN_EMAIL_ID_CHARS || !MAC.test(given)) return undefined;
      return crypto.timingSafeEqual(Buffer.from(given), Buffer.from(mac(emailId))) ? emailId : undefined;
    },
  };
}
