import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { ENCRYPTION_KEY_BYTES, parseEncryptionKey } from '../domain/encryption-key-text.js';
import { makePrivateDir } from '../private-dir.js';

export const ENCRYPTION_KEY_FILE = 'encryption-key';

/**
 * The key that seals DKIM private keys: MAILER_ENCRYPTION_KEY when set; else the one kept in the data dir,
 * generated on first start (readable by its owner only). Every process of an installation must use the
 * same key; losing it loses the DKIM keys (new ones would have to be made and published).
 */
export async function loadEncryptionKey(
  configured: string | undefined,
  dataDir: string,
): Promise<{ key: Buffer; created: boolean }> {
  if (configured !== undefined) return { key: parseEncryptionKey(configured, 'MAILER_ENCRYPTION_KEY'), created: false };
  const file = path.join(dataDir, ENCRYPTION_KEY_FILE);
  const existing = await readIfExists(file);
  if (existing !== undefined) return { key: parseEncryptionKey(existing, file), created: false };
  await makePrivateDir(dataDir);
  const key = crypto.randomBytes(ENCRYPTION_KEY_BYTES);
  try {
    await fs.writeFile(file, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    return { key, created: true };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    // Another process made it first: use theirs.
    return { key: parseEncryptionKey(await fs.readFile(file, 'utf8'), file), created: false };
  }
}

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    const text = await fs.readFile(file, 'utf8');
    return text.trim() === '' ? undefined : text;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
