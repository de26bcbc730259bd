import crypto from 'node:crypto';

/**
 * Webhook request signing (spec, "Webhook request signing"): `X-Mail-Signature: sha256=<hex>` where the
 * digest is HMAC-SHA256, keyed with the webhook's secret, over `{X-Mail-Timestamp}.{raw body}`.
 * `verifyWebhookSignature` is what a receiver runs; it is exported for senders' own code and used by the tests.
 */
export const SIGNATURE_HEADER = 'x-mail-signature';
/** During a secret rotation's overlap: the same signature made with the previous secret. */
export const PREVIOUS_SIGNATURE_HEADER = 'x-mail-signature-previous';
export const TIMESTAMP_HEADER = 'x-mail-timestamp';
/** Receivers should refuse requests whose timestamp is older (or newer) than this: replays. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

export function signatureFor(secret: string, timestamp: number | string, rawBody: string | Buffer): string {
  const hmac = crypto.createHmac('sha256', secret);
  hmac.update(`${timestamp}.`);
  hmac.update(rawBody);
  return `sha256=${hmac.digest('hex')}`;
}

export type VerifyResult =
  { ok: true } | { ok: false; reason: 'missing headers' | 'malformed' | 'stale timestamp' | 'signature mismatch' };

/**
 * Checks a webhook request as received: the signature over the exact raw body, in constant time, and a
 * timestamp within `toleranceSeconds` of `now` (seconds since the epoch). `X-Mail-Signature-Previous` is
 * accepted too, so that a receiver holding either secret of a rotation's overlap verifies every request.
 */
export function verifyWebhookSignature(options: {
  secret: string;
  headers: Record<string, string | string[] | undefined> | Headers;
  rawBody: string | Buffer;
  toleranceSeconds?: number;
  now?: number;
}): VerifyResult {
  const get = (name: string): string | undefined => {
    const h = options.headers;
    if (h instanceof Headers) return h.get(name) ?? undefined;
    const v = h[name] ?? Object.entries(h).find(([k]) => k.toLowerCase() === name)?.[1];
    return Array.isArray(v) ? v[0] : v;
  };
  const signature = get(SIGNATURE_HEADER);
  const timestamp = get(TIMESTAMP_HEADER);
  if (signature === undefined || timestamp === undefined) return { ok: false, reason: 'missing headers' };
  if (!/^\d{1,12}$/.test(timestamp) || !/^sha256=[0-9a-f]{64}$/.test(signature))
    return { ok: false, reason: 'malformed' };
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS))
    return { ok: false, reason: 'stale timestamp' };
  const expected = Buffer.from(signatureFor(options.secret, timestamp, options.rawBody));
  const matches = (given: string | undefined) =>
    given !== undefined &&
    Buffer.byteLength(given) === expected.length &&
    crypto.timingSafeEqual(expected, Buffer.from(given));
  return matches(signature) || matches(get(PREVIOUS_SIGNATURE_HEADER))
    ? { ok: true }
    : { ok: false, reason: 'signature mismatch' };
}
