import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../../src/local/embedded-postgres.js';
import { createLogger } from '../../src/logger.js';
import { freePort } from '../helpers/ports.js';

/**
 * The embedded PostgreSQL's safe defaults, on a real server: a random password per data directory (and the
 * fixed password of older data directories replaced), and, when run as root, a clear refusal instead of
 * initdb's "Permission denied" when the `postgres` user cannot reach the data directory.
 */
const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'warn', 'test');
const asRoot = os.userInfo().uid === 0;

let base: string;
let locked: string;
let dataDir: string;
let port: number;
let running: EmbeddedPostgresHandle | undefined;

const start = async () => (running = await startEmbeddedPostgres({ dataDir, port, database: 'mailer', logger }));
const stop = async () => {
  await running?.stop();
  running = undefined;
};

async function connectError(url: string): Promise<{ code?: string } | undefined> {
  const sql = postgres(url, { max: 1, connect_timeout: 5, onnotice: () => {} });
  try {
    await sql`select 1`;
    return undefined;
  } catch (err) {
    return err as { code?: string };
  } finally {
    await sql.end({ timeout: 1 });
  }
}

const passwordOf = (url: string) => decodeURIComponent(new URL(url).password);

beforeAll(async () => {
  // Like `mktemp -d` or root's home: a directory only its owner may enter.
  base = await fs.mkdtemp(path.join(os.tmpdir(), 'mailer-pg-defaults-'));
  locked = path.join(base, 'private');
  await fs.mkdir(locked, { mode: 0o700 });
  await fs.chmod(base, 0o755);
  dataDir = path.join(locked, 'data');
  port = await freePort();
});
afterAll(async () => {
  await stop();
  await fs.rm(base, { recursive: true, force: true });
});

describe('embedded PostgreSQL', () => {
  it.skipIf(!asRoot)(
    'run as root inside a 0700 directory, refuses at once, saying which directory and what to do',
    async () => {
      const t0 = Date.now();
      const err = await startEmbeddedPostgres({ dataDir, port, logger }).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err?.message).toContain(`cannot enter ${locked} (mode 0700, owner uid 0)`);
      expect(err?.message).toContain(`chmod o+x ${locked}`);
      expect(err?.message).toContain('MAILER_DATA_DIR');
      expect(Date.now() - t0).toBeLessThan(5_000);
      // `npm start` says the same and exits.
      const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/start.ts'], {
        cwd: path.resolve(import.meta.dirname, '../..'),
        encoding: 'utf8',
        timeout: 60_000,
        env: {
          ...process.env,
          MAILER_DATA_DIR: dataDir,
          MAILER_EMBEDDED_PG_PORT: String(port),
          DATABASE_URL: '',
          LOG_LEVEL: 'warn',
        },
      });
      expect(run.status).toBe(1);
      expect(run.stderr).toContain(`chmod o+x ${locked}`);
      // Nothing half-made that a later start would trip over.
      await expect(fs.stat(path.join(dataDir, 'postgres'))).rejects.toMatchObject({ code: 'ENOENT' });
    },
  );

  it('starts once the directory can be passed through, with a random password kept 0600 in the data dir', async () => {
    await fs.chmod(locked, 0o711);
    const pg = await start();
    const file = path.join(dataDir, 'postgres-password');
    const stat = await fs.stat(file);
    expect(stat.mode & 0o777).toBe(0o600);
    const password = (await fs.readFile(file, 'utf8')).trim();
    expect(password).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(passwordOf(pg.url)).toBe(password);
    expect(await connectError(pg.url)).toBeUndefined();
    // The old fixed password, or any other, is refused.
    expect((await connectError(pg.url.replace(password, 'mailer-embedded')))?.code).toBe('28P01');
  });

  it('keeps the same password across restarts', async () => {
    const before = passwordOf(running!.url);
    await stop();
    const pg = await start();
    expect(passwordOf(pg.url)).toBe(before);
    expect(await connectError(pg.url)).toBeUndefined();
  });

  it('replaces the fixed password of a data directory made by an older version', async () => {
    // Make the cluster look like an old one: the fixed password, no password file.
    const admin = postgres(running!.url, { max: 1, onnotice: () => {} });
    await admin.unsafe(`alter role postgres password 'mailer-embedded'`);
    await admin.end();
    await stop();
    await fs.rm(path.join(dataDir, 'postgres-password'));

    const pg = await start();
    const password = (await fs.readFile(path.join(dataDir, 'postgres-password'), 'utf8')).trim();
    expect(password).not.toBe('mailer-embedded');
    expect(passwordOf(pg.url)).toBe(password);
    expect(await connectError(pg.url)).toBeUndefined();
    expect((await connectError(pg.url.replace(password, 'mailer-embedded')))?.code).toBe('28P01');
  });

  it('says what to do when the password file no longer matches the cluster', async () => {
    await stop();
    await fs.writeFile(path.join(dataDir, 'postgres-password'), 'not-the-password-0123456789\n', { mode: 0o600 });
    await expect(start()).rejects.toThrow(
      /does not accept the password in .*postgres-password: restore that file, or remove/,
    );
  });
});
