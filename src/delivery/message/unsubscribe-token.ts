import crypto from 'node:crypto';
import { base32 } from './report-token.js';

/**
 * The one-click unsubscribe token of a broadcast email (RFC 8058; CONTRACT.md, "Streams, one-click unsubscribe
 * and suppressions"): `<email id>-<mac>`, the mac HMAC-SHA256 of the email id under a key derived from the
 * service's tracking secret for this purpose alone, truncated to 120 bits and written in lower-case base32.
 *
 * It names the email, and so the account, the recipient (a broadcast email has exactly one) and the topic,
 * which the database supplies: nothing the holder could change travels in it, and changing one character of
 * the id breaks the mac. It is all lower case (case-insensitive on the way in) because it also travels as the
 * local part of the mailto address (`unsub-<token>@<return-path domain>`), whose case mail servers may change.
 * The derived key differs from the report tokens' (report-token.ts), so neither token can stand for the other:
 * the report token is quoted in every message's headers and bounces, and must not unsubscribe anyone.
 */
export interface UnsubscribeTokens {
  sign(emailId: string): string;
  /** The email a token names, or undefined when this service did not sign it (compared in constant time). */
  verify(token: string): string | undefined;
}

const MAC_BYTES = 15;
const MAC_CHARS = Math.ceil((MAC_BYTES * 8) / 5);
/** Email ids are `em_` and a 26-character ULID; anything much longer is no email id of ours. */
const MAX_EMAIL_ID_CHARS = 37;
/** The longest token verify looks at: anything longer is refused before any work. */
export const MAX_UNSUBSCRIBE_TOKEN_CHARS = MAX_EMAIL_ID_CHARS + 1 + MAC_CHARS;
const TOKEN = /^([a-z0-9_]+)-([a-z2-7]+)$/;
const KEY_PURPOSE = 'mailer unsubscribe token key v1';

/** Tokens under a key derived from `secret` (the service's tracking key, kept sealed in the settings table). */
export function createUnsubscribeTokens(secret: Buffer | string): UnsubscribeTokens {
  if (Buffer.byteLength(secret) < 16) throw new Error('the unsubscribe token secret must have at least 16 bytes');
  const key = crypto.createHmac('sha256', secret).update(KEY_PURPOSE).digest();
  const mac = (emailId: string) =>
    base32(crypto.createHmac('sha256', key).update(emailId).digest().subarray(0, MAC_BYTES));
  return {
    sign(emailId) {
      if (emailId.length > MAX_EMAIL_ID_CHARS || !/^[a-z0-9_]+$/.test(emailId))
        throw new Error(`not an email id: ${emailId}`);
      return `${emailId}-${mac(emailId)}`;
    },
    verify(token) {
      if (token.length > MAX_UNSUBSCRIBE_TOKEN_CHARS) return undefined;
      const match = TOKEN.exec(token.toLowerCase());
      if (!match) return undefined;
      const [, emailId = '', given = ''] = match;
      if (emailId.length > MAX_EMAIL_ID_CHARS || given.length !== MAC_CHARS) return undefined;
      return crypto.timingSafeEqual(Buffer.from(given), Buffer.from(mac(emailId))) ? emailId : undefined;
    },
  };
}

/** The local-part prefix of the mailto unsubscribe address (return-path.ts's `b-` is the bounce address's). */
export const UNSUBSCRIBE_ADDRESS_PREFIX = 'unsub-';
/** RFC 5321's limit on a local part: `unsub-` and a token fit (6 + 29 + 1 + 24). */
const MAX_LOCAL_PART_CHARS = 64;

/** The mailto unsubscribe address of a token at `domain` (the return-path domain, whose MX is the inbound listener). */
export function unsubscribeAddress(token: string, domain: string): string {
  const local = `${UNSUBSCRIBE_ADDRESS_PREFIX}${token}`;
  if (local.length > MAX_LOCAL_PART_CHARS) throw new Error(`the unsubscribe address of ${token} is too long`);
  if (domain === '' || domain.includes('@')) throw new Error(`not a domain: ${domain}`);
  return `${local}@${domain}`;
}

/** True for an address shaped like an unsubscribe address (`unsub-...@...`), whether or not its token is valid. */
export function isUnsubscribeAddress(address: string): boolean {
  const at = address.lastIndexOf('@');
  return (
    at > UNSUBSCRIBE_ADDRESS_PREFIX.length &&
    address.slice(0, UNSUBSCRIBE_ADDRESS_PREFIX.length).toLowerCase() === UNSUBSCRIBE_ADDRESS_PREFIX
  );
}

/** The email an unsubscribe address names (at any domain: the token is the proof), or undefined. */
export function parseUnsubscribeAddress(
  tokens: Pick<UnsubscribeTokens, 'verify'>,
  address: string,
): string | undefined {
  if (!isUnsubscribeAddress(address)) return undefined;
  const local = address.slice(0, address.lastIndexOf('@'));
  if (local.length > MAX_LOCAL_PART_CHARS) return undefined;
  return tokens.verify(local.slice(UNSUBSCRIBE_ADDRESS_PREFIX.length));
}

/** The two RFC 8058 headers of a broadcast email. */
export interface ListUnsubscribe {
  /** The page (GET) and one-click (POST) URL: `{tracking URL}/u/<token>`. */
  url: string;
  /** The mailto address: `unsub-<token>@<return-path domain>`. */
  mailto: string;
}

/** The path the unsubscribe URL lives under (http/tracking-routes.ts serves it). */
export const UNSUBSCRIBE_PATH = '/u/';

/** The unsubscribe URL and address of an email, from the tracking URL (origin and path only) and the return-path domain. */
export function listUnsubscribeOf(
  tokens: UnsubscribeTokens,
  emailId: string,
  trackingUrl: string,
  mailtoDomain: string,
): ListUnsubscribe {
  const parsed = new URL(trackingUrl);
  const base = parsed.origin + parsed.pathname.replace(/\/+$/, '');
  const token = tokens.sign(emailId);
  return { url: `${base}${UNSUBSCRIBE_PATH}${token}`, mailto: unsubscribeAddress(token, mailtoDomain) };
}

/**
 * The header fields (RFC 2369, RFC 8058) of a broadcast email: the HTTPS URL first (what one-click receivers
 * POST to), then the mailto form for clients that only mail.
 */
export function listUnsubscribeHeaders(links: ListUnsubscribe): Record<string, string> {
  return {
    'List-Unsubscribe': `<${links.url}>, <mailto:${links.mailto}>`,
    'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
  };
}
