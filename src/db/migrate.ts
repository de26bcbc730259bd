import type { Logger } from '../logger.js';
import { MIGRATIONS } from './migrations/index.js';
import type { Sql, Tx } from './sql.js';

/** Any constant shared by every process of the service; only one of them migrates at a time. */
const MIGRATION_LOCK = 0x6d61696c; // "mail"

/**
 * Applies the migrations not yet applied, and then `afterMigrate`, all in ONE transaction that first takes a
 * transaction-scoped advisory lock. A process starting beside another waits on that lock until the first
 * commits, then finds every migration recorded and applies none; a failure anywhere rolls back the whole run,
 * so the database is left at the version it had. `afterMigrate` runs in every process, but under the lock and
 * after the others' commits, so first-run seeding (which checks for an empty database) happens exactly once.
 */
export async function migrate(sql: Sql, logger: Logger, afterMigrate?: (tx: Tx) => Promise<void>): Promise<number[]> {
  const applied: number[] = [];
  await sql.begin(async (tx) => {
    // Transaction-scoped lock: released by commit or by the connection dying, never left behind.
    await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`create table if not exists schema_migrations (
      version integer primary key, name text not null, applied_at timestamptz not null default now())`;
    const done = new Set(
      (await tx<{ version: number }[]>`select version from schema_migrations`).map((r) => r.version),
    );
    for (const m of MIGRATIONS) {
      if (done.has(m.version)) continue;
      if (m.sql !== '') await tx.unsafe(m.sql);
      if (m.run) await m.run(tx);
      await tx`insert into schema_migrations (version, name) values (${m.version}, ${m.name})`;
      applied.push(m.version);
      logger.info({ version: m.version, name: m.name }, 'migration applied');
    }
    if (afterMigrate) await afterMigrate(tx);
  });
  return applied;
}
