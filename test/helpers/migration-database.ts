import crypto from 'node:crypto';
import postgres from 'postgres';
import { afterAll, inject } from 'vitest';
import { MIGRATIONS } from '../../src/db/migrations/index.js';

/**
 * A database of its own for a migration's test, dropped after the file's tests: `upTo(v)` creates it with
 * every migration before version `v` applied (as an installation of that time would have it), and `apply(v)`
 * then applies migration `v` as migrate() does, in one transaction.
 */
export function useMigrationDatabase() {
  const name = `t_mig_${crypto.randomBytes(5).toString('hex')}`;
  const adminUrl = inject('pgAdminUrl');
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  let sql: postgres.Sql | undefined;

  afterAll(async () => {
    await sql?.end();
    await admin.unsafe(`drop database if exists ${name}`);
    await admin.end();
  });

  const applyOne = (db: postgres.Sql, m: (typeof MIGRATIONS)[number]) =>
    db.begin(async (tx) => {
      await tx.unsafe(m.sql);
      if (m.run) await m.run(tx);
    });

  return {
    async upTo(version: number): Promise<postgres.Sql> {
      await admin.unsafe(`create database ${name}`);
      sql = postgres(adminUrl.replace(/\/postgres$/, `/${name}`), { max: 1, onnotice: () => {} });
      for (const m of MIGRATIONS.filter((x) => x.version < version)) await applyOne(sql, m);
      return sql;
    },
    async apply(version: number): Promise<void> {
      await applyOne(
        sql!,
        MIGRATIONS.find((x) => x.version === version)!,
      );
    },
  };
}
