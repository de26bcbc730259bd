import { describe, expect, it } from 'vitest';
import { createEmailDeliveriesRepo } from '../../src/db/index.js';
import { createSql } from '../../src/db/sql.js';
import { call, validEmail } from '../helpers/http.js';
import { useStack } from '../helpers/use-stack.js';

/** The delivery lease in one statement, against the real table: an API-role stack leaves accepted emails pending. */
const stack = useStack({ MAILER_ROLE: 'api' });

async function accepted(): Promise<string> {
  const res = await call('POST', `${stack.api}/emails`, { token: stack.apiKey, body: validEmail() });
  expect(res.status, res.text).toBe(200);
  return res.body.id as string;
}

describe('emailDeliveries.lease', () => {
  it("takes the free pending emails, answers when another live attempt's lease ends, and takes an expired one", async () => {
    const sql = createSql(stack.databaseUrl, { max: 1 });
    try {
      const repo = createEmailDeliveriesRepo(sql);
      const [a, b] = [await accepted(), await accepted()];

      const first = await repo.lease([a], 'token-1', 60);
      expect(first).toEqual({ leased: [a], busyUntil: null });

      const second = await repo.lease([a, b], 'token-2', 60);
      expect(second.leased).toEqual([b]);
      expect(second.busyUntil).toBeInstanceOf(Date);
      const leftMs = second.busyUntil!.getTime() - Date.now();
      expect(leftMs).toBeGreaterThan(30_000);
      expect(leftMs).toBeLessThan(90_000);

      // Nothing left to take: both held, the other attempt's lease still reported.
      const third = await repo.lease([a, b], 'token-3', 60);
      expect(third.leased).toEqual([]);
      expect(third.busyUntil).toBeInstanceOf(Date);

      // A lease that ran out is taken over, and counts an attempt.
      await sql`update emails set lease_until = now() - interval '1 second' where id = ${a}`;
      expect(await repo.lease([a], 'token-4', 60)).toEqual({ leased: [a], busyUntil: null });
      const [row] = await sql<
        { attempts: number; lease_token: string }[]
      >`select attempts, lease_token from emails where id = ${a}`;
      expect(row).toEqual({ attempts: 2, lease_token: 'token-4' });

      // Renewal extends only the holder's leases that are running low.
      const leftOf = async (id: string) => {
        const [r] = await sql<
          { left: number }[]
        >`select extract(epoch from lease_until - now())::float8 as left from emails where id = ${id}`;
        return r!.left;
      };
      await repo.renewLeases([a], 'token-4', { seconds: 120, belowSeconds: 30 });
      expect(await leftOf(a)).toBeLessThan(61);
      await repo.renewLeases([a], 'token-other', { seconds: 120, belowSeconds: 90 });
      expect(await leftOf(a)).toBeLessThan(61);
      await repo.renewLeases([a], 'token-4', { seconds: 120, belowSeconds: 90 });
      expect(await leftOf(a)).toBeGreaterThan(110);

      // An email no longer pending is neither leased nor busy.
      await sql`update emails set status = 'delivered' where id = ${b}`;
      expect(await repo.lease([b], 'token-5', 60)).toEqual({ leased: [], busyUntil: null });
    } finally {
      await sql.end();
    }
  });
});
