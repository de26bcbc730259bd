import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PRIVATE_DIR_MODE } from '../private-dir.js';

/**
 * The data dir when it holds the embedded PostgreSQL (local development): run as root, embedded-postgres runs
 * the server as the `postgres` user, which must pass through the data dir to its own 0700 directory.
 */
/** Owner only, and others may pass through (not list): for a data dir the embedded PostgreSQL's own user must enter. */
export const PASSABLE_DIR_MODE = 0o711;

/** The data dir's mode: 0700, or 0711 when the embedded PostgreSQL runs as the `postgres` user (the service runs as root). */
export function dataDirMode(usesEmbeddedPostgres: boolean): number {
  return usesEmbeddedPostgres && os.userInfo().uid === 0 ? PASSABLE_DIR_MODE : PRIVATE_DIR_MODE;
}

/**
 * Whether the data dir holds an embedded PostgreSQL's files (its `postgres` directory, local/embedded-postgres.ts):
 * then its server's user must pass through, whichever process looks. The worker child of `npm start` is handed
 * the embedded server's DATABASE_URL and would otherwise take the data dir for one without it (and close it).
 */
export async function holdsEmbeddedPostgres(dataDir: string): Promise<boolean> {
  return fs.stat(path.join(dataDir, 'postgres')).then(
    (s) => s.isDirectory(),
    () => false,
  );
}
