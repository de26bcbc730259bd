import crypto from 'node:crypto';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com), sent beside `X-Mail-Signature` so that
 * receivers can verify with an existing library: `webhook-signature: v1,<base64 HMAC-SHA256>` over
 * `{webhook-id}.{webhook-timestamp}.{raw body}`, keyed with the secret's bytes. Several space-separated
 * signatures are allowed: during a secret rotation's overlap there is one per secret.
 */
export const STANDARD_ID_HEADER = 'webhook-id';
export const STANDARD_TIMESTAMP_HEADER = 'webhook-timestamp';
export const STANDARD_SIGNATURE_HEADER = 'webhook-signature';
const PREFIX = 'whsec_';

/**
 * The key bytes of a secret as the Standard Webhooks libraries derive them: the base64 after `whsec_`.
 * Node's base64 decoder reads both alphabets, so the secrets made before rotation existed
 * (`whsec_<base64url>`) give the same 32 bytes as their standard-alphabet spelling, which is the string
 * a receiver passes to a library (standardWebhooksSecret below). A secret without the
 * prefix (none of ours) is used as its UTF-8 bytes, like the libraries' "raw" format.
 */
export function standardKeyOf(secret: string): Buffer {
  return secret.startsWith(PREFIX) ? Buffer.from(secret.slice(PREFIX.length), 'base64') : Buffer.from(secret, 'utf8');
}

/** One `v1,<base64>` signature of a message. */
export function standardSignatureFor(
  secret: string,
  id: string,
  timestamp: number | string,
  rawBody: string | Buffer,
): string {
  const hmac = crypto.createHmac('sha256', standardKeyOf(secret));
  hmac.update(`${id}.${timestamp}.`);
  hmac.update(rawBody);
  return `v1,${hmac.digest('base64')}`;
}

/**
 * The secret string to give a Standard Webhooks library for one of our secrets: new secrets
 * (`whsec_<base64>`) are already in that form; older ones (`whsec_<base64url>`) are the same bytes written
 * with `+` and `/` for `-` and `_`.
 */
export function standardWebhooksSecret(secret: string): string {
  return secret.startsWith(PREFIX)
    ? PREFIX + secret.slice(PREFIX.length).replace(/-/g, '+').replace(/_/g, '/')
    : secret;
}
