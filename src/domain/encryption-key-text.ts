/** The installation's key seals with AES-256-GCM: 32 bytes. */
export const ENCRYPTION_KEY_BYTES = 32;

/**
 * The key as MAILER_ENCRYPTION_KEY writes it: 64 hex digits, or base64 / base64url of 32 bytes. Throws a
 * message that says how to make a good one (never echoing the value: it is a secret, even malformed).
 */
export function parseEncryptionKey(text: string, source: string): Buffer {
  const value = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) {
    const bytes = Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (bytes.length === ENCRYPTION_KEY_BYTES) return bytes;
  }
  throw new Error(
    `${source} must be ${ENCRYPTION_KEY_BYTES} bytes written as 64 hex digits or in base64 (${value.length} characters given): ` +
      'generate one with `openssl rand -hex 32`',
  );
}
