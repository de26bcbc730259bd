import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQuotaRepo } from '../../src/db/repos/quota-repo.js';
import type { Sql } from '../../src/db/sql.js';
import { createTestDatabase } from '../helpers/stack.js';

/**
 * quota-repo.ts reserveEach: several accounts' daily counters in one statement, each against its own limit, as
 * the API's group commit of the quota makes them (services/quota-reserver.ts).
 */
const ACCOUNTS = ['acc_q1', 'acc_q2', 'acc_q3', 'acc_q4'];
const DAY = '2026-11-28';

let sql: postgres.Sql;
beforeAll(async () => {
  sql = postgres(await createTestDatabase(), { max: 8, onnotice: () => {} });
  for (const id of ACCOUNTS) await sql`insert into accounts (id, name) values (${id}, ${id})`;
});
afterAll(async () => {
  await sql.end();
});

const usage = async () =>
  Object.fromEntries(
    (
      await sql<
        { account_id: string; used: number }[]
      >`select account_id, used from quota_usage where day = ${DAY}::date`
    ).map((r) => [r.account_id, r.used]),
  );

describe('reserveEach', () => {
  it('adds each counter that stays within its own limit and refuses the others whole, answering in the order given', async () => {
    const quota = createQuotaRepo(sql as unknown as Sql);
    expect(
      await quota.reserveEach([
        { accountId: 'acc_q2', day: DAY, n: 3, limit: 5 },
        { accountId: 'acc_q1', day: DAY, n: 6, limit: 5 },
      ]),
    ).toEqual([3, undefined]);
    expect(
      await quota.reserveEach([
        { accountId: 'acc_q1', day: DAY, n: 5, limit: 5 },
        { accountId: 'acc_q2', day: DAY, n: 3, limit: 5 },
        { accountId: 'acc_q2', day: '2026-11-29', n: 3, limit: 5 },
      ]),
    ).toEqual([5, undefined, 3]);
    expect(await usage()).toEqual({ acc_q1: 5, acc_q2: 3 });
    await expect(
      quota.reserveEach([
        { accountId: 'acc_q3', day: DAY, n: 1, limit: 5 },
        { accountId: 'acc_q3', day: DAY, n: 1, limit: 9 },
      ]),
    ).rejects.toThrow(/one counter per account and day/);
  });

  it('concurrent statements over the same accounts in any order: exact totals, no limit passed, no deadlock', async () => {
    const quota = createQuotaRepo(sql as unknown as Sql);
    await sql`delete from quota_usage`;
    const LIMIT = 400;
    const shuffled = () => [...ACCOUNTS].sort(() => Math.random() - 0.5);
    const admitted = new Map<string, number>(ACCOUNTS.map((a) => [a, 0]));
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let round = 0; round < 40; round++) {
          const counters = shuffled().map((accountId) => ({ accountId, day: DAY, n: 1 + (round % 3), limit: LIMIT }));
          const used = await quota.reserveEach(counters);
          counters.forEach((c, i) => {
            if (used[i] !== undefined) admitted.set(c.accountId, admitted.get(c.accountId)! + c.n);
          });
        }
      }),
    );
    const after = await usage();
    for (const a of ACCOUNTS) {
      expect(after[a]).toBe(admitted.get(a));
      expect(after[a]).toBeLessThanOrEqual(LIMIT);
    }
    // 8 x 40 rounds of about 2 each (640) against 400: some were refused, and the counters filled up close to it.
    expect(Math.min(...ACCOUNTS.map((a) => after[a] as number))).toBeGreaterThan(LIMIT - 3);
  });
});
