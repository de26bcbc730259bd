import crypto from 'node:crypto';

/**
 * API keys are long random secrets, so a single SHA-256 is the right hash (a slow password hash per request
 * would cost more than the send). Only the digest is stored; the key is shown once.
 */
const KEY_PREFIX = 'mk_';
const KEY_SHAPE = /^mk_[A-Za-z0-9_-]{43}$/;

export function generateApiKey(): { key: string; hash: Buffer; prefix: string } {
  const key = `${KEY_PREFIX}${crypto.randomBytes(32).toString('base64url')}`;
  return { key, hash: hashSecret(key), prefix: key.slice(0, 10) };
}

/** Keys that cannot be ours are refused without a database round trip. */
export function looksLikeApiKey(value: string): boolean {
  return KEY_SHAPE.test(value);
}

export function hashSecret(secret: string): Buffer {
  return crypto.createHash('sha256').update(secret).digest();
}

/** Constant-time equality of two secrets of any length (compares their digests). */
export function secretsEqual(a: string, b: string): boolean {
  return crypto.timingSafeEqual(hashSecret(a), hashSecret(b));
}

export function digestsEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

/**
 * `whsec_` and 32 random bytes in standard base64 (with its padding): the Standard Webhooks secret format, so
 * that the string shown at creation is what a receiver gives a Standard Webhooks library unchanged. Secrets
 * made before used base64url; they still sign both headers (webhooks/standard-signature.ts).
 */
export function generateWebhookSecret(): string {
  return `whsec_${crypto.randomBytes(32).toString('base64')}`;
}

export function generateToken(bytes = 32): string {
  return crypto.randomBytes(bytes).toString('base64url');
}

export function sha256(data: string | Uint8Array): Buffer {
  return crypto.createHash('sha256').update(data).digest();
}
