import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadEncryptionKey } from '../../src/secrets/encryption-key.js';

const KEY = crypto.randomBytes(32);

/** The key's file in the data dir, on a real file system: the key's own rules are test/unit/key-box.test.ts. */
describe('encryption key', () => {
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
