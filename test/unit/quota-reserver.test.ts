import { describe, expect, it } from 'vitest';
import { groupedQuotaReserve } from '../../src/services/quota-reserver.js';

const turn = () => new Promise((r) => setImmediate(r));

/** The repository seam: an in-memory counter per account and day, as quota-repo.ts keeps it; records each statement. */
function fakeQuota(failOn?: number) {
  const used = new Map<string, number>();
  const calls: string[] = [];
  return {
    calls,
    used,
    async reserve(accountId: string, day: string, n: number, limit: number): Promise<number | undefined> {
      calls.push(`${accountId} ${day} +${n}`);
      await turn();
      if (n === failOn) throw new Error('database unavailable');
      const key = `${accountId} ${day}`;
      const after = (used.get(key) ?? 0) + n;
      if (after > limit) return undefined;
      used.set(key, after);
      return after;
    },
  };
}

describe('grouped quota reservations (group commit of the daily quota)', () => {
  it("sums one turn's reservations per account and day into one statement; another account, day or the next turn gets its own", async () => {
    const repo = fakeQuota();
    const reserve = groupedQuotaReserve(repo.reserve);
    const first = await Promise.all([
      reserve('acc_a', '2026-11-28', 1, 100),
      reserve('acc_a', '2026-11-28', 2, 100),
      reserve('acc_b', '2026-11-28', 1, 100),
      reserve('acc_a', '2026-11-29', 1, 100),
      reserve('acc_a', '2026-11-28', 3, 100),
    ]);
    expect(repo.calls.sort()).toEqual(['acc_a 2026-11-28 +6', 'acc_a 2026-11-29 +1', 'acc_b 2026-11-28 +1']);
    expect(first).toEqual([6, 6, 1, 1, 6]);
    expect(await reserve('acc_a', '2026-11-28', 1, 100)).toBe(7);
    expect(repo.calls).toHaveLength(4);
  });

  it('a sum that does not fit is reserved again one at a time in arrival order: the earlier ones are admitted, the ones past the limit refused', async () => {
    const repo = fakeQuota();
    const reserve = groupedQuotaReserve(repo.reserve);
    await reserve('acc_a', 'd', 7, 10);
    const answers = await Promise.all([1, 1, 1, 1, 1].map((n) => reserve('acc_a', 'd', n, 10)));
    expect(answers).toEqual([8, 9, 10, undefined, undefined]);
    expect(repo.used.get('acc_a d')).toBe(10);
    expect(repo.calls).toEqual(['acc_a d +7', 'acc_a d +5', ...Array(5).fill('acc_a d +1')]);
  });

  it("a statement that fails fails each reservation in it, and no other account's", async () => {
    const repo = fakeQuota(3);
    const reserve = groupedQuotaReserve(repo.reserve);
    const settled = await Promise.allSettled([
      reserve('acc_a', 'd', 1, 10),
      reserve('acc_a', 'd', 2, 10),
      reserve('acc_b', 'd', 1, 10),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected', 'fulfilled']);
    expect(repo.used.get('acc_a d')).toBeUndefined();
  });
});
