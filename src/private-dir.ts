import fs from 'node:fs/promises';
import type { Logger } from './logger.js';

/**
 * The data dir holds secrets (the encryption key, the admin token, the embedded PostgreSQL's password) and
 * mail (the catcher's .eml files, Temporal's database with every workflow's input): readable by the service's
 * user only. Directories are made 0700 and files 0600 explicitly, and the entry points set the umask to 077 so
 * that what child processes and libraries write there (temporal.db) is private too.
 */
export const PRIVATE_UMASK = 0o077;
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** `mkdir -p` with every directory it makes 0700. */
export async function makePrivateDir(dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/**
 * A data dir that exists and is open to others (an earlier version made it 0755, or an operator made it) is
 * made 0700, with a log line. One that does not exist is left to be made (0700) when something is first
 * written: a deployment that uses none of it needs no writable data dir.
 */
export async function tightenDataDir(dir: string, logger: Logger): Promise<void> {
  let mode: number;
  try {
    mode = (await fs.stat(dir)).mode & 0o777;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  if ((mode & ~PRIVATE_DIR_MODE) === 0) return;
  await fs.chmod(dir, PRIVATE_DIR_MODE);
  logger.warn({ dataDir: dir, was: `0${mode.toString(8)}` }, 'the data dir was open to other users: made it 0700 (owner only)');
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
