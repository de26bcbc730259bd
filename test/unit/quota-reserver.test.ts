import { describe, expect, it } from 'vitest';
import type { QuotaCounter } from '../../src/db/repos/quota-repo.js';
import { groupedQuotaReserve } from '../../src/services/quota-reserver.js';

const turn = () => new Promise((r) => setImmediate(r));

/**
 * The repository seam: an in-memory counter per account and day, as quota-repo.ts keeps it; records each
 * statement. `fail` makes a statement throw: `reserve` when adding that n, `reserveEach` always, with `error`.
 */
function fakeQuota(fail: { n?: number; each?: Error } = {}) {
  const used = new Map<string, number>();
  const calls: string[] = [];
  const add = (c: QuotaCounter) => {
    const key = `${c.accountId} ${c.day}`;
    const after = (used.get(key) ?? 0) + c.n;
    if (after > c.limit) return undefined;
    used.set(key, after);
    return after;
  };
  return {
    calls,
    used,
    async reserve(accountId: string, day: string, n: number, limit: number): Promise<number | undefined> {
      calls.push(`${accountId} ${day} +${n}`);
      await turn();
      if (n === fail.n) throw new Error('check constraint violated');
      return add({ accountId, day, n, limit });
    },
    async reserveEach(counters: QuotaCounter[]): Promise<(number | undefined)[]> {
      calls.push(`each: ${counters.map((c) => `${c.accountId} ${c.day} +${c.n}`).join(', ')}`);
      await turn();
      if (fail.each) throw fail.each;
      return counters.map(add);
    },
  };
}

describe('grouped quota reservations (group commit of the daily quota)', () => {
  it("sums one turn's reservations per account and day, and adds every sum in one statement; the next turn gets its own", async () => {
    const repo = fakeQuota();
    const reserve = groupedQuotaReserve(repo);
    const first = await Promise.all([
      reserve('acc_a', '2026-11-28', 1, 100),
      reserve('acc_a', '2026-11-28', 2, 100),
      reserve('acc_b', '2026-11-28', 1, 100),
      reserve('acc_a', '2026-11-29', 1, 100),
      reserve('acc_a', '2026-11-28', 3, 100),
    ]);
    expect(repo.calls).toEqual(['each: acc_a 2026-11-28 +6, acc_b 2026-11-28 +1, acc_a 2026-11-29 +1']);
    expect(first).toEqual([6, 6, 1, 1, 6]);
    expect(await reserve('acc_a', '2026-11-28', 1, 100)).toBe(7);
    expect(repo.calls.slice(1)).toEqual(['acc_a 2026-11-28 +1']);
  });

  it('a sum that does not fit is reserved again one at a time in arrival order: the earlier ones are admitted, the ones past the limit refused', async () => {
    const repo = fakeQuota();
    const reserve = groupedQuotaReserve(repo);
    await reserve('acc_a', 'd', 7, 10);
    const answers = await Promise.all([
      ...[1, 1, 1, 1, 1].map((n) => reserve('acc_a', 'd', n, 10)),
      reserve('acc_b', 'd', 4, 10),
    ]);
    expect(answers).toEqual([8, 9, 10, undefined, undefined, 4]);
    expect(repo.used.get('acc_a d')).toBe(10);
    expect(repo.calls).toEqual(['acc_a d +7', 'each: acc_a d +5, acc_b d +4', ...Array(5).fill('acc_a d +1')]);
  });

  it('a second limit for the same account and day in one turn (its quota changed) is reserved by a statement of its own', async () => {
    const repo = fakeQuota();
    const reserve = groupedQuotaReserve(repo);
    const answers = await Promise.all([
      reserve('acc_a', 'd', 1, 10),
      reserve('acc_b', 'd', 1, 10),
      reserve('acc_a', 'd', 2, 20),
    ]);
    expect(repo.calls.sort()).toEqual(['acc_a d +2', 'each: acc_a d +1, acc_b d +1']);
    expect(repo.used.get('acc_a d')).toBe(3);
    expect(answers[1]).toBe(1);
  });

  it("a statement that fails is made again per account: one account's failure fails its own reservations and no other's", async () => {
    const repo = fakeQuota({ n: 3, each: new Error('check constraint violated') });
    const reserve = groupedQuotaReserve(repo);
    const settled = await Promise.allSettled([
      reserve('acc_a', 'd', 1, 10),
      reserve('acc_a', 'd', 2, 10),
      reserve('acc_b', 'd', 1, 10),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected', 'fulfilled']);
    expect(repo.used.get('acc_a d')).toBeUndefined();
    expect(repo.used.get('acc_b d')).toBe(1);
  });

  it('a statement whose connection was lost (it may have committed) is not made again: each of its reservations fails', async () => {
    const lost = Object.assign(new Error('write CONNECTION_CLOSED'), { code: 'CONNECTION_CLOSED' });
    const repo = fakeQuota({ each: lost });
    const reserve = groupedQuotaReserve(repo);
    const settled = await Promise.allSettled([reserve('acc_a', 'd', 1, 10), reserve('acc_b', 'd', 1, 10)]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    expect(repo.calls).toEqual(['each: acc_a d +1, acc_b d +1']);
  });
});
