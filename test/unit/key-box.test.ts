import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { parseEncryptionKey } from '../../src/domain/encryption-key-text.js';
import { sealedContext } from '../../src/domain/sealed-values.js';
import { createKeyBox } from '../../src/secrets/key-box.js';
import { sealUnbound } from '../helpers/legacy-sealing.js';

const KEY = crypto.randomBytes(32);
const SECRET = '-----BEGIN PRIVATE KEY-----\nMIIEv...secret...\n-----END PRIVATE KEY-----\n';

describe('key box (AES-256-GCM sealing of the secrets stored in the database)', () => {
  const ROW_A = sealedContext.webhookSecret('wh_A');
  const ROW_B = sealedContext.webhookSecret('wh_B');

  it('opens what it sealed; the sealed text is versioned, names the key and does not contain the secret', () => {
    const box = createKeyBox(KEY);
    const sealed = box.seal(SECRET, ROW_A);
    expect(sealed.startsWith(`kb2.${box.keyId}.`)).toBe(true);
    expect(sealed).not.toContain('PRIVATE KEY');
    expect(sealed).not.toContain(Buffer.from(SECRET).toString('base64').slice(0, 20));
    expect(box.open(sealed, ROW_A)).toBe(SECRET);
    expect(box.isBound(sealed)).toBe(true);
    expect(box.isBound('whsec_c2VjcmV0')).toBe(false);
    // A fresh IV each time.
    expect(box.seal(SECRET, ROW_A)).not.toBe(sealed);
  });

  it('a value sealed for row A does not open as row B, nor as another purpose of row A', () => {
    const box = createKeyBox(KEY);
    const sealed = box.seal(SECRET, ROW_A);
    expect(() => box.open(sealed, ROW_B)).toThrow(/failed authentication for webhooks\.secret\/wh_B/);
    expect(() => box.open(sealed, sealedContext.dkimPrivateKey('wh_A'))).toThrow(/failed authentication/);
    expect(() => box.open(sealed, sealedContext.setting('tracking_key'))).toThrow(/failed authentication/);
    try {
      box.open(sealed, ROW_B);
    } catch (err) {
      expect((err as Error).message).not.toContain(sealed);
    }
  });

  it('a value sealed before values were bound to their row (kb1) opens only where the caller allows it', () => {
    const box = createKeyBox(KEY);
    const legacy = sealUnbound(KEY, SECRET);
    expect(box.isBound(legacy)).toBe(false);
    expect(box.openAllowingUnbound(legacy, sealedContext.dkimPrivateKey('dk_1'))).toBe(SECRET);
    expect(() => box.open(legacy, ROW_A)).toThrow(/not bound/);
    // Bound values are checked against their context there too.
    expect(() => box.openAllowingUnbound(box.seal(SECRET, ROW_A), ROW_B)).toThrow(/failed authentication/);
  });

  it('refuses a value sealed under another key, naming key ids but never the value', () => {
    const sealed = createKeyBox(crypto.randomBytes(32)).seal(SECRET, ROW_A);
    expect(() => createKeyBox(KEY).open(sealed, ROW_A)).toThrow(/another encryption key/);
  });

  it('refuses an altered value or one of an unknown format', () => {
    const box = createKeyBox(KEY);
    const parts = box.seal(SECRET, ROW_A).split('.');
    const ct = Buffer.from(parts[3]!, 'base64url');
    ct[0]! ^= 1;
    parts[3] = ct.toString('base64url');
    expect(() => box.open(parts.join('.'), ROW_A)).toThrow(/failed authentication/);
    expect(() => box.open('kb3.x.y.z.w', ROW_A)).toThrow(/known format/);
    expect(() => box.open(SECRET, ROW_A)).toThrow(/known format/);
  });

  it('takes only 32-byte keys', () => {
    expect(() => createKeyBox(crypto.randomBytes(16))).toThrow(/32 bytes/);
  });
});

describe('encryption key', () => {
  it('reads 64 hex digits, base64 and base64url; refuses anything else without echoing it', () => {
    expect(parseEncryptionKey(KEY.toString('hex'), 'K')).toEqual(KEY);
    expect(parseEncryptionKey(KEY.toString('base64'), 'K')).toEqual(KEY);
    expect(parseEncryptionKey(KEY.toString('base64url'), 'K')).toEqual(KEY);
    expect(() => parseEncryptionKey('not-a-key-but-a-secret', 'MAILER_ENCRYPTION_KEY')).toThrow(
      /MAILER_ENCRYPTION_KEY must be 32 bytes/,
    );
    try {
      parseEncryptionKey('not-a-key-but-a-secret', 'MAILER_ENCRYPTION_KEY');
    } catch (err) {
      expect((err as Error).message).not.toContain('not-a-key-but-a-secret');
    }
    expect(() => parseEncryptionKey(crypto.randomBytes(24).toString('base64'), 'K')).toThrow(/32 bytes/);
  });

  it('a malformed MAILER_ENCRYPTION_KEY stops the configuration from loading', () => {
    expect(() => loadConfig({ MAILER_ENCRYPTION_KEY: 'abc' })).toThrow(/MAILER_ENCRYPTION_KEY must be 32 bytes/);
    expect(loadConfig({ MAILER_ENCRYPTION_KEY: KEY.toString('hex') }).encryptionKey).toBe(KEY.toString('hex'));
  });
});
