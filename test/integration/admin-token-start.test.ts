import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN_MIN_LENGTH } from '../../src/config.js';
import { loadAdminToken } from '../../src/services/bootstrap-service.js';

const root = path.resolve(import.meta.dirname, '../..');

/** The admin token's length where it takes a process or a file: the setting's own rule is test/unit/admin-token-length.test.ts. */
describe('the admin token length', () => {
  it('npm start stops at once with that message and a failing exit code', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/start.ts'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 30_000,
      env: {
        ...process.env,
        MAILER_ADMIN_TOKEN: 'adm_short',
        MAILER_DATA_DIR: path.join(os.tmpdir(), 'never-created'),
      },
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('MAILER_ADMIN_TOKEN must be at least 32 characters long');
  });

  it('generates a token long enough, and refuses a short one written into the data dir by hand', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'admin-token-'));
    try {
      const made = await loadAdminToken(undefined, dir);
      expect(made.created).toBe(true);
      expect(made.token.length).toBeGreaterThanOrEqual(ADMIN_TOKEN_MIN_LENGTH);
      expect(await loadAdminToken(undefined, dir)).toEqual({ token: made.token, created: false });
      await fs.writeFile(path.join(dir, 'admin-token'), 'adm_short\n');
      await expect(loadAdminToken(undefined, dir)).rejects.toThrow(/shorter than 32 characters: delete the file/);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
