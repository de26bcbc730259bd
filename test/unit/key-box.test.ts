import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { loadEncryptionKey, parseEncryptionKey } from '../../src/mail/encryption-key.js';
import { createKeyBox } from '../../src/mail/key-box.js';

const KEY = crypto.randomBytes(32);
const SECRET = '-----BEGIN PRIVATE KEY-----\nMIIEv...secret...\n-----END PRIVATE KEY-----\n';

describe('key box (AES-256-GCM sealing of DKIM private keys)', () => {
  it('opens what it sealed; the sealed text is versioned, names the key and does not contain the secret', () => {
    const box = createKeyBox(KEY);
    const sealed = box.seal(SECRET);
    expect(sealed.startsWith(`kb1.${box.keyId}.`)).toBe(true);
    expect(sealed).not.toContain('PRIVATE KEY');
    expect(sealed).not.toContain(Buffer.from(SECRET).toString('base64').slice(0, 20));
    expect(box.open(sealed)).toBe(SECRET);
    // A fresh IV each time.
    expect(box.seal(SECRET)).not.toBe(sealed);
  });

  it('refuses a value sealed under another key, naming key ids but never the value', () => {
    const sealed = createKeyBox(crypto.randomBytes(32)).seal(SECRET);
    expect(() => createKeyBox(KEY).open(sealed)).toThrow(/another encryption key/);
  });

  it('refuses an altered value or one of an unknown format', () => {
    const box = createKeyBox(KEY);
    const parts = box.seal(SECRET).split('.');
    const ct = Buffer.from(parts[3]!, 'base64url');
    ct[0]! ^= 1;
    parts[3] = ct.toString('base64url');
    expect(() => box.open(parts.join('.'))).toThrow(/failed authentication/);
    expect(() => box.open('kb2.x.y.z.w')).toThrow(/known format/);
    expect(() => box.open(SECRET)).toThrow(/known format/);
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
    expect(() => parseEncryptionKey('not-a-key-but-a-secret', 'MAILER_ENCRYPTION_KEY')).toThrow(/MAILER_ENCRYPTION_KEY must be 32 bytes/);
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

  it('unset, one is generated once into the data dir (mode 0600) and read back after', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'enc-key-'));
    try {
      const made = await loadEncryptionKey(undefined, dir);
      expect(made.created).toBe(true);
      expect(made.key.length).toBe(32);
      const stat = await fs.stat(path.join(dir, 'encryption-key'));
      expect(stat.mode & 0o777).toBe(0o600);
      expect(await loadEncryptionKey(undefined, dir)).toEqual({ key: made.key, created: false });
      // A configured key wins over the file.
      expect((await loadEncryptionKey(KEY.toString('hex'), dir)).key).toEqual(KEY);
      await fs.writeFile(path.join(dir, 'encryption-key'), 'garbage\n');
      await expect(loadEncryptionKey(undefined, dir)).rejects.toThrow(/encryption-key must be 32 bytes/);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
