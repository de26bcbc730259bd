import { fromJson, type JsonValue } from '@bufbuild/protobuf';
import { MailEventSchema, type MailEvent } from './gen/mail/v1/email_service_pb.js';

/**
 * Standard Webhooks verification (https://www.standardwebhooks.com), as the service signs every webhook request
 * (its src/webhooks/standard-signature.ts): `webhook-signature: v1,<base64 HMAC-SHA256>` over
 * `{webhook-id}.{webhook-timestamp}.{raw body}`, keyed with the bytes of the secret after `whsec_`; during a
 * secret rotation's overlap there is one space-separated signature per secret, and either verifies.
 *
 * Done with WebCrypto rather than the `standardwebhooks` package: the SDK then has no dependency for it and runs
 * unchanged in browsers, edge runtimes and Node 20, and the secrets the service made before rotation existed
 * (`whsec_` + base64url) verify too, where that package's decoder takes the standard alphabet only.
 */

/** A signature that does not verify, a header missing, or a timestamp outside the tolerance. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

/** Request headers as any server gives them: a fetch Headers, or Node's object of strings and arrays. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** How far the timestamp may be from now, either way, in seconds. Default 300 (Standard Webhooks). */
  toleranceSeconds?: number;
}

const DEFAULT_TOLERANCE_SECONDS = 5 * 60;

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name) continue;
    return Array.isArray(value) ? value.join(' ') : value;
  }
  return undefined;
}

/** Base64 in either alphabet, padded or not, to bytes; undefined when it is not base64. */
function base64Bytes(text: string): Uint8Array<ArrayBuffer> | undefined {
  const standard = text.replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, '');
  if (!/^[A-Za-z0-9+/]*$/.test(standard) || standard.length % 4 === 1) return undefined;
  const binary = atob(standard + '='.repeat((4 - (standard.length % 4)) % 4));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/** The HMAC key of a secret as the Standard Webhooks libraries derive it: the base64 after `whsec_`, else its UTF-8. */
function keyBytes(secret: string): Uint8Array<ArrayBuffer> {
  if (secret.startsWith('whsec_')) {
    const bytes = base64Bytes(secret.slice('whsec_'.length));
    if (bytes === undefined || bytes.length === 0)
      throw new WebhookVerificationError('the secret is not a whsec_ secret');
    return bytes;
  }
  return new TextEncoder().encode(secret);
}

/**
 * Verifies a webhook request and returns its event. `body` is the raw body exactly as received (a string or
 * its bytes: parsed and re-serialised JSON would not verify); `secret` the webhook's `whsec_` signing secret.
 * Throws WebhookVerificationError when a Standard Webhooks header is missing, no signature verifies, or the
 * timestamp is more than five minutes from now (a replayed request).
 */
export async function verify(
  body: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyOptions = {},
): Promise<MailEvent> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures)
    throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature header');
  if (!/^\d{1,15}$/.test(timestamp)) throw new WebhookVerificationError('webhook-timestamp is not a Unix time');
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > tolerance)
    throw new WebhookVerificationError(`webhook-timestamp is more than ${tolerance} s from now`);

  const bodyBytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  const prefix = new TextEncoder().encode(`${id}.${timestamp}.`);
  const signed = new Uint8Array(prefix.length + bodyBytes.length);
  signed.set(prefix);
  signed.set(bodyBytes, prefix.length);
  const key = await crypto.subtle.importKey('raw', keyBytes(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'verify',
  ]);
  let verified = false;
  for (const candidate of signatures.split(' ')) {
    const [version, value] = candidate.split(',', 2);
    const signature = version === 'v1' && value !== undefined ? base64Bytes(value) : undefined;
    // subtle.verify compares in constant time.
    if (signature !== undefined && (await crypto.subtle.verify('HMAC', key, signature, signed))) {
      verified = true;
      break;
    }
  }
  if (!verified) throw new WebhookVerificationError('no signature in webhook-signature verifies with this secret');

  const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
  try {
    return fromJson(MailEventSchema, JSON.parse(text) as JsonValue, { ignoreUnknownFields: true });
  } catch (err) {
    throw new WebhookVerificationError(`the signed body is not a webhook event: ${String(err)}`);
  }
}

/** `Webhooks.verify(body, headers, secret)`: for a receiver that has no API key, without a Mailer. */
export const Webhooks = { verify };
