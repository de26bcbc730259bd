import fs from 'node:fs/promises';
import path from 'node:path';
import postgres from 'postgres';
import { expect, it } from 'vitest';
import { schemaSnapshot } from '../../src/db/schema-snapshot.js';
import type { Sql } from '../../src/db/sql.js';
import { createTestDatabase } from '../helpers/stack.js';

/**
 * src/db/schema.sql is the schema every migration leaves (the test template database is migrated at the start
 * of the run): this fails when a migration changed it and the file was not written again.
 */
const FILE = path.join(import.meta.dirname, '../../src/db/schema.sql');

it('src/db/schema.sql is the schema after all migrations', async () => {
  const sql = postgres(await createTestDatabase(), { max: 1, onnotice: () => {} });
  try {
    const snapshot = await schemaSnapshot(sql as unknown as Sql);
    if (process.env.UPDATE_SCHEMA === '1') await fs.writeFile(FILE, snapshot);
    const committed = await fs.readFile(FILE, 'utf8').catch(() => '');
    expect(
      committed,
      'src/db/schema.sql is stale: UPDATE_SCHEMA=1 npx vitest run test/integration/schema-snapshot.test.ts',
    ).toBe(snapshot);
  } finally {
    await sql.end();
  }
});
