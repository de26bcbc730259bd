import crypto from 'node:crypto';
import type { SecretBox } from '../domain/sealed-values.js';
import { ENCRYPTION_KEY_BYTES } from '../domain/encryption-key-text.js';

/**
 * Sealing of secrets kept in the database (DKIM private keys, webhook secrets, the tracking key) under the
 * installation's encryption key (MAILER_ENCRYPTION_KEY, or the one generated into the data dir): AES-256-GCM,
 * so a sealed value that was altered, or is opened under another key, fails instead of yielding garbage.
 *
 * Format: `kb2.<key id>.<iv>.<ciphertext>.<tag>` (base64url parts). The version lets the format change and
 * the key id (the first bytes of a SHA-256 of the key, not the key) says which key sealed a value, so a
 * later key rotation can open old values with the old key and re-seal them; today there is one key.
 * Each value is sealed for a context (domain/sealed-values.ts: the column and row that hold it), authenticated
 * as additional data and not stored: a value copied into another row fails to open there.
 *
 * `kb1` values (DKIM keys sealed before contexts existed) have the same parts and no context; they still open
 * where the caller allows them (openAllowingUnbound), and the start re-seals them as `kb2`.
 */
export interface KeyBox extends SecretBox {
  /** Opens a value sealed for `context`, or a `kb1` value sealed for none (DKIM keys made before contexts). */
  openAllowingUnbound(sealed: string, context: string): string;
  /** Names the key in sealed values; also the key's fingerprint recorded in the database. */
  readonly keyId: string;
}

const BOUND = 'kb2';
const UNBOUND = 'kb1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export function keyIdOf(key: Buffer): string {
  return crypto.createHash('sha256').update('mailer key-box id').update(key).digest('base64url').slice(0, 8);
}

export function createKeyBox(key: Buffer): KeyBox {
  if (key.length !== ENCRYPTION_KEY_BYTES)
    throw new Error(`an encryption key is ${ENCRYPTION_KEY_BYTES} bytes, got ${key.length}`);
  const keyId = keyIdOf(key);
  // The prefix is authenticated too: a value cannot be moved under another version or key id. The key id has
  // a fixed length, so the context after it cannot be confused with it.
  const additionalData = (version: string, context: string | undefined) =>
    Buffer.from(version === UNBOUND ? `${UNBOUND}.${keyId}` : `${BOUND}.${keyId}.${context}`);

  function open(sealed: string, context: string, allowUnbound: boolean): string {
    const parts = sealed.split('.');
    const version = parts[0];
    if (parts.length !== 5 || (version !== BOUND && version !== UNBOUND))
      throw new Error('not a sealed value of a known format');
    if (version === UNBOUND && !allowUnbound) throw new Error('a sealed value is not bound to where it is stored');
    const [, sealedKeyId, iv, ciphertext, tag] = parts as [string, string, string, string, string];
    if (sealedKeyId !== keyId) {
      throw new Error(
        `this value was sealed under another encryption key (id ${sealedKeyId}; the configured key is ${keyId}): every process needs the same MAILER_ENCRYPTION_KEY`,
      );
    }
    const tagBytes = Buffer.from(tag, 'base64url');
    if (tagBytes.length !== TAG_BYTES) throw new Error('a sealed value has a malformed tag');
    try {
      const decipher = crypto.createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(additionalData(version, context));
      decipher.setAuthTag(tagBytes);
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      // Node's own message says nothing of the value, but a fixed one is certain to say nothing.
      throw new Error(
        `a sealed value failed authentication for ${context}: it was altered, copied from elsewhere, or sealed under another key`,
      );
    }
  }

  return {
    keyId,
    seal(plain, context) {
      const iv = crypto.randomBytes(IV_BYTES);
      const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(additionalData(BOUND, context));
      const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return [
        BOUND,
        keyId,
        iv.toString('base64url'),
        ciphertext.toString('base64url'),
        cipher.getAuthTag().toString('base64url'),
      ].join('.');
    },
    open: (sealed, context) => open(sealed, context, false),
    openAllowingUnbound: (sealed, context) => open(sealed, context, true),
    isBound: (stored) => stored.startsWith(`${BOUND}.`) && stored.split('.').length === 5,
  };
}
