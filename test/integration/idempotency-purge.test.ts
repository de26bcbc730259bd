import { expect, it } from 'vitest';
import { createIdempotencyRepo } from '../../src/db/index.js';
import { createSql } from '../../src/db/sql.js';
import { createTestDatabase } from '../helpers/stack.js';

it('purging forgets Idempotency-Keys older than their 24 hours and keeps younger ones', async () => {
  const sql = createSql(await createTestDatabase(), { max: 1 });
  try {
    await sql`insert into accounts (id, name) values ('acc_purge', 'purge')`;
    await sql`
      insert into idempotency_keys (account_id, key, operation, request_hash, response, created_at) values
        ('acc_purge', 'old', 'send', '\\x00', '{}', now() - interval '25 hours'),
        ('acc_purge', 'young', 'send', '\\x00', '{}', now() - interval '23 hours')`;
    expect(await createIdempotencyRepo(sql).purgeExpired(24)).toBe(1);
    const left = await sql<{ key: string }[]>`select key from idempotency_keys where account_id = 'acc_purge'`;
    expect(left.map((r) => r.key)).toEqual(['young']);
  } finally {
    await sql.end();
  }
});
