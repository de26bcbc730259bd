import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { dataDirMode, holdsEmbeddedPostgres } from '../../src/local/data-dir.js';
import { makePrivateDir, tightenDataDir } from '../../src/private-dir.js';

const root = await fs.mkdtemp(path.join(os.tmpdir(), 'private-dir-'));
afterAll(() => fs.rm(root, { recursive: true, force: true }));
const modeOf = async (dir: string) => (await fs.stat(dir)).mode & 0o777;

function capture() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger(
    'info',
    'test',
    new Writable({ write: (c: Buffer, _e, done) => (lines.push(JSON.parse(c.toString()) as never), done()) }),
  );
  return { lines, logger };
}

describe('the data dir', () => {
  it('is made 0700 with its parents, whatever the umask', async () => {
    const previous = process.umask(0o022);
    try {
      await makePrivateDir(path.join(root, 'a', 'b'));
    } finally {
      process.umask(previous);
    }
    expect(await modeOf(path.join(root, 'a'))).toBe(0o700);
    expect(await modeOf(path.join(root, 'a', 'b'))).toBe(0o700);
  });

  it('an existing one open to others is made owner-only with a log line; one already private is left alone', async () => {
    const dir = path.join(root, 'open');
    await fs.mkdir(dir);
    await fs.chmod(dir, 0o755);
    const { lines, logger } = capture();
    await tightenDataDir(dir, 0o700, logger);
    expect(await modeOf(dir)).toBe(0o700);
    await tightenDataDir(dir, 0o700, logger);
    await tightenDataDir(path.join(root, 'missing'), 0o700, logger);
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        dataDir: dir,
        was: '0755',
        now: '0700',
        msg: 'the data dir was open to other users: its mode is now owner-only',
      }),
    ]);
    await expect(fs.stat(path.join(root, 'missing'))).rejects.toThrow(/ENOENT/);
  });

  it('is 0711 only where the embedded PostgreSQL runs as its own user (the service runs as root): others pass through, never list', async () => {
    expect(dataDirMode(false)).toBe(0o700);
    expect(dataDirMode(true)).toBe(os.userInfo().uid === 0 ? 0o711 : 0o700);
    const dir = path.join(root, 'passable');
    await fs.mkdir(dir);
    await fs.chmod(dir, 0o755);
    await tightenDataDir(dir, 0o711, capture().logger);
    expect(await modeOf(dir)).toBe(0o711);
    // A data dir holding an embedded PostgreSQL's files is one, whichever process asks (npm start's worker child too).
    expect(await holdsEmbeddedPostgres(dir)).toBe(false);
    await fs.mkdir(path.join(dir, 'postgres'));
    expect(await holdsEmbeddedPostgres(dir)).toBe(true);
    // Made 0700 by a process that wrote there first (the worker child's catcher, say): PostgreSQL's user could not enter.
    await fs.chmod(dir, 0o700);
    await tightenDataDir(dir, 0o711, capture().logger);
    expect(await modeOf(dir)).toBe(0o711);
  });
});
