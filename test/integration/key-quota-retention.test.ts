import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRetentionRepo } from '../../src/db/index.js';
import { createSql, type Sql } from '../../src/db/sql.js';
import { utcDay } from '../../src/domain/quota.js';
import { createLogger } from '../../src/logger.js';
import { createRetentionService } from '../../src/services/retention-service.js';
import { createTestDatabase } from '../helpers/stack.js';

/**
 * Retention of the per-key daily counts (api_key_quota_usage, issue 27): only today's is read, so a run deletes the
 * days before yesterday, whatever the policy's days, in batches; the account's quota_usage (its history) stays.
 */
let sql: Sql;
const ACCOUNT = 'acc_key_retention';
const KEY = 'key_key_retention';
const DAY_MS = 86_400_000;

beforeAll(async () => {
  sql = createSql(await createTestDatabase(), { max: 2 });
  await sql`insert into accounts (id, name) values (${ACCOUNT}, 'key retention')`;
  await sql`
    insert into api_keys (id, account_id, name, permission, key_hash, key_prefix, daily_quota)
    values (${KEY}, ${ACCOUNT}, 'k', 'all', ${Buffer.alloc(32, 7)}, 'mk_test', 10)`;
});
afterAll(async () => {
  await sql.end();
});

describe('api_key_quota_usage', () => {
  it('a run deletes the days before yesterday, keeps yesterday and today, and leaves quota_usage alone', async () => {
    const now = new Date();
    const day = (ago: number) => utcDay(new Date(now.getTime() - ago * DAY_MS));
    for (const ago of [0, 1, 2, 3, 40]) {
      await sql`insert into api_key_quota_usage (api_key_id, day, used) values (${KEY}, ${day(ago)}::date, ${ago + 1})`;
      await sql`insert into quota_usage (account_id, day, used) values (${ACCOUNT}, ${day(ago)}::date, ${ago + 1})`;
    }
    const service = createRetentionService({
      repo: createRetentionRepo(sql),
      removeFile: async () => {},
      logger: createLogger('warn', 'test'),
      now: () => now,
      batch: { rows: 2, budgetMs: 60_000 },
    });
    // Both of the policy's days 0 (keep forever): the counts go anyway, they limit nothing.
    const run = await service.run({ contentDays: 0, eventsDays: 0 });
    expect(run).toMatchObject({ keyQuotaDays: 3, complete: true });
    const left = await sql<{ day: string }[]>`
      select to_char(day, 'YYYY-MM-DD') as day from api_key_quota_usage where api_key_id = ${KEY} order by day`;
    expect(left.map((r) => r.day)).toEqual([day(1), day(0)]);
    const history = await sql<
      { n: number }[]
    >`select count(*)::int as n from quota_usage where account_id = ${ACCOUNT}`;
    expect(history[0]!.n).toBe(5);
    expect((await service.run({ contentDays: 0, eventsDays: 0 })).keyQuotaDays).toBe(0);
  });
});
