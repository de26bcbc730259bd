import crypto from 'node:crypto';
import { keyIdOf } from '../../src/secrets/key-box.js';

/**
 * A value sealed as the key box sealed DKIM keys before sealed values were bound to their row (format kb1:
 * AES-256-GCM, the additional data being only `kb1.<key id>`), written here as that code wrote it: what an
 * upgraded installation's database still holds.
 */
export function sealUnbound(key: Buffer, plain: string): string {
  const keyId = keyIdOf(key);
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(`kb1.${keyId}`));
  const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return [
    'kb1',
    keyId,
    iv.toString('base64url'),
    ciphertext.toString('base64url'),
    cipher.getAuthTag().toString('base64url'),
  ].join('.');
}
