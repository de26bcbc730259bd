import type { Logger } from '../logger.js';
import { MIGRATIONS } from './migrations/index.js';
import type { Sql } from './sql.js';

/** Any constant shared by every process of the service; only one of them migrates at a time. */
const MIGRATION_LOCK = 0x6d61696c; // "mail"

/**
 * Applies the migrations not yet applied, each in its own transaction, holding a session advisory lock so
 * that processes starting at once wait for each other instead of racing. `afterMigrate` runs under the
 * same lock (first-run seeding uses it to run exactly once).
 */
export async function migrate(sql: Sql, logger: Logger, afterMigrate?: (sql: Sql) => Promise<void>): Promise<number[]> {
  const applied: number[] = [];
  await sql.begin(async (tx) => {
    // Transaction-scoped lock: released by commit or by the connection dying, never left behind.
    await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`create table if not exists schema_migrations (
      version integer primary key, name text not null, applied_at timestamptz not null default now())`;
    const done = new Set((await tx<{ version: number }[]>`select version from schema_migrations`).map((r) => r.version));
    for (const m of MIGRATIONS) {
      if (done.has(m.version)) continue;
      if (m.sql !== '') await tx.unsafe(m.sql);
      if (m.run) await m.run(tx as unknown as Sql);
      await tx`insert into schema_migrations (version, name) values (${m.version}, ${m.name})`;
      applied.push(m.version);
      logger.info({ version: m.version, name: m.name }, 'migration applied');
    }
    if (afterMigrate) await afterMigrate(tx as unknown as Sql);
  });
  return applied;
}
