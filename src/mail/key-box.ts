import crypto from 'node:crypto';

/**
 * Sealing of secrets kept in the database (DKIM private keys) under the installation's encryption key
 * (MAILER_ENCRYPTION_KEY, or the one generated into the data dir): AES-256-GCM, so a sealed value that was
 * altered, or is opened under another key, fails instead of yielding garbage.
 *
 * Format: `kb1.<key id>.<iv>.<ciphertext>.<tag>` (base64url parts). The version lets the format change and
 * the key id (the first bytes of a SHA-256 of the key, not the key) says which key sealed a value, so a
 * later key rotation can open old values with the old key and re-seal them; today there is one key.
 */
export interface KeyBox {
  seal(plain: string): string;
  /** Throws (never echoing the value) when the value is malformed, sealed under another key, or altered. */
  open(sealed: string): string;
  /** Names the key in sealed values. */
  readonly keyId: string;
}

const VERSION = 'kb1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const ENCRYPTION_KEY_BYTES = 32;

export function keyIdOf(key: Buffer): string {
  return crypto.createHash('sha256').update('mailer key-box id').update(key).digest('base64url').slice(0, 8);
}

export function createKeyBox(key: Buffer): KeyBox {
  if (key.length !== ENCRYPTION_KEY_BYTES) throw new Error(`an encryption key is ${ENCRYPTION_KEY_BYTES} bytes, got ${key.length}`);
  const keyId = keyIdOf(key);
  return {
    keyId,
    seal(plain) {
      const iv = crypto.randomBytes(IV_BYTES);
      const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
      // The prefix is authenticated too: a value cannot be moved under another version or key id.
      cipher.setAAD(Buffer.from(`${VERSION}.${keyId}`));
      const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return [VERSION, keyId, iv.toString('base64url'), ciphertext.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
    },
    open(sealed) {
      const parts = sealed.split('.');
      if (parts.length !== 5 || parts[0] !== VERSION) throw new Error('not a sealed value of a known format');
      const [, sealedKeyId, iv, ciphertext, tag] = parts as [string, string, string, string, string];
      if (sealedKeyId !== keyId) {
        throw new Error(`this value was sealed under another encryption key (id ${sealedKeyId}; the configured key is ${keyId}): every process needs the same MAILER_ENCRYPTION_KEY`);
      }
      const tagBytes = Buffer.from(tag, 'base64url');
      if (tagBytes.length !== TAG_BYTES) throw new Error('a sealed value has a malformed tag');
      try {
        const decipher = crypto.createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
        decipher.setAAD(Buffer.from(`${VERSION}.${keyId}`));
        decipher.setAuthTag(tagBytes);
        return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        // Node's own message says nothing of the value, but a fixed one is certain to say nothing.
        throw new Error('a sealed value failed authentication: it was altered or sealed under another key');
      }
    },
  };
}
