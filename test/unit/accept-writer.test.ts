import { describe, expect, it } from 'vitest';
import type { PrincipalClaim } from '../../src/db/repos/principal-claims.js';
import type { QuotaCounter } from '../../src/db/repos/quota-repo.js';
import type { NewEmail } from '../../src/domain/entities/emails.js';
import { createAcceptWriter, type CountedEmail } from '../../src/services/accept-writer.js';

const turn = () => new Promise((r) => setImmediate(r));
const email = (id: string, accountId = 'acc_a'): CountedEmail => ({ email: { id, accountId } as NewEmail });
const counted = (id: string, accountId: string, limit: number, n = 1): CountedEmail => ({
  email: { id, accountId } as NewEmail,
  quota: { accountId, day: '2026-11-29', n, limit },
});

/**
 * The repository seam: records each statement's email ids; refuses any statement holding an id in `refused`;
 * counts quotas as reserve_daily_quota does (a counter past its limit fails the whole statement, MQ429) and
 * refuses claims as confirm_principals does (a claim on a key in `staleKeys` fails the whole statement, MQ401).
 */
function fakeEmails(refused: Set<string> = new Set(), staleKeys: Set<string> = new Set()) {
  const calls: string[][] = [];
  const options: unknown[] = [];
  const used = new Map<string, number>();
  return {
    calls,
    options,
    used,
    async accept(
      emails: NewEmail[],
      opts: { enqueue: boolean; quota?: QuotaCounter[]; claims?: PrincipalClaim[] },
    ): Promise<void> {
      calls.push(emails.map((e) => e.id));
      options.push(opts);
      await turn();
      if (emails.some((e) => refused.has(e.id))) throw new Error(`refused ${emails.map((e) => e.id).join(',')}`);
      if ((opts.claims ?? []).some((c) => staleKeys.has(c.keyId)))
        throw Object.assign(new Error('key changed'), { code: 'MQ401' });
      const counters = opts.quota ?? [];
      if (counters.some((c) => (used.get(c.accountId) ?? 0) + c.n > c.limit))
        throw Object.assign(new Error('daily quota exceeded'), { code: 'MQ429' });
      for (const c of counters) used.set(c.accountId, (used.get(c.accountId) ?? 0) + c.n);
    },
  };
}

/** How each promise settled, once all have. */
const outcomes = (ps: Promise<void>[]) =>
  Promise.all(
    ps.map((p) =>
      p.then(
        () => 'ok',
        (err: Error) => err.message,
      ),
    ),
  );

describe('accept writer (group commit of accepted emails)', () => {
  it("writes the emails of one event-loop turn in one enqueuing statement, each request answered once it is committed; the next turn's in another", async () => {
    const repo = fakeEmails();
    const write = createAcceptWriter(repo);
    const first = ['e1', 'e2', 'e3'].map((id, i) => write(email(id, i === 2 ? 'acc_b' : 'acc_a')));
    expect(repo.calls).toEqual([]);
    await turn();
    expect(repo.calls).toEqual([['e1', 'e2', 'e3']]);
    expect(repo.options).toEqual([{ enqueue: true }]);
    const second = write(email('e4'));
    expect(await outcomes(first)).toEqual(['ok', 'ok', 'ok']);
    expect(await outcomes([second])).toEqual(['ok']);
    expect(repo.calls).toEqual([['e1', 'e2', 'e3'], ['e4']]);
  });

  it('a refused group is written again one email a statement: only the email the database refuses fails, its neighbours (another account) are stored', async () => {
    const repo = fakeEmails(new Set(['bad']));
    const write = createAcceptWriter(repo);
    const results = outcomes([write(email('e1')), write(email('bad', 'acc_b')), write(email('e2'))]);
    expect(await results).toEqual(['ok', 'refused bad', 'ok']);
    expect(repo.calls).toEqual([['e1', 'bad', 'e2'], ['e1'], ['bad'], ['e2']]);
  });

  it('a lone email the database refuses fails at once, without a second try', async () => {
    const repo = fakeEmails(new Set(['bad']));
    const write = createAcceptWriter(repo);
    expect(await outcomes([write(email('bad'))])).toEqual(['refused bad']);
    expect(repo.calls).toEqual([['bad']]);
  });

  it("counts the group's quota in its statement, summed per account and day", async () => {
    const repo = fakeEmails();
    const write = createAcceptWriter(repo);
    const all = [counted('e1', 'acc_a', 10), counted('e2', 'acc_b', 5), counted('e3', 'acc_a', 10, 2), email('e4')];
    expect(await outcomes(all.map(write))).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(repo.calls).toEqual([['e1', 'e2', 'e3', 'e4']]);
    expect(repo.options).toEqual([
      {
        enqueue: true,
        quota: [
          { accountId: 'acc_a', day: '2026-11-29', n: 3, limit: 10 },
          { accountId: 'acc_b', day: '2026-11-29', n: 1, limit: 5 },
        ],
      },
    ]);
    expect(Object.fromEntries(repo.used)).toEqual({ acc_a: 3, acc_b: 1 });
  });

  it('a group whose sum does not fit a quota is written again one email at a time, in order: the first ones with room kept, the rest refused', async () => {
    const repo = fakeEmails();
    repo.used.set('acc_a', 7);
    const write = createAcceptWriter(repo);
    const ids = ['e1', 'e2', 'e3', 'e4', 'e5'];
    const results = await outcomes([
      ...ids.map((id) => write(counted(id, 'acc_a', 10))),
      write(counted('b1', 'acc_b', 10)),
    ]);
    expect(results).toEqual(['ok', 'ok', 'ok', 'daily quota exceeded', 'daily quota exceeded', 'ok']);
    expect(repo.calls).toEqual([[...ids, 'b1'], ['e1'], ['e2'], ['e3'], ['e4'], ['e5'], ['b1']]);
    expect(Object.fromEntries(repo.used)).toEqual({ acc_a: 10, acc_b: 1 });
  });

  it("names each request's claim on a cached key in the group's statement; a refused claim fails its own email alone, the group written again in order", async () => {
    const claimed = (id: string, keyId: string): CountedEmail => ({
      email: { id, accountId: 'acc_a' } as NewEmail,
      claim: { keyId, fingerprint: `fp_${keyId}` },
    });
    const fresh = fakeEmails();
    expect(
      await outcomes([claimed('e1', 'k1'), claimed('e2', 'k1'), email('e3')].map(createAcceptWriter(fresh))),
    ).toEqual(['ok', 'ok', 'ok']);
    expect(fresh.options).toEqual([
      {
        enqueue: true,
        claims: [
          { keyId: 'k1', fingerprint: 'fp_k1' },
          { keyId: 'k1', fingerprint: 'fp_k1' },
        ],
      },
    ]);
    const stale = fakeEmails(new Set(), new Set(['k2']));
    const write = createAcceptWriter(stale);
    expect(await outcomes([claimed('e1', 'k1'), claimed('x', 'k2'), email('e2')].map(write))).toEqual([
      'ok',
      'key changed',
      'ok',
    ]);
    expect(stale.calls).toEqual([['e1', 'x', 'e2'], ['e1'], ['x'], ['e2']]);
    expect(stale.options.slice(1)).toEqual([
      { enqueue: true, claims: [{ keyId: 'k1', fingerprint: 'fp_k1' }] },
      { enqueue: true, claims: [{ keyId: 'k2', fingerprint: 'fp_k2' }] },
      { enqueue: true },
    ]);
  });

  it('at most 100 emails a statement', async () => {
    const repo = fakeEmails();
    const write = createAcceptWriter(repo);
    const all = Array.from({ length: 250 }, (_, i) => write(email(`e${i}`)));
    expect((await outcomes(all)).every((o) => o === 'ok')).toBe(true);
    expect(repo.calls.map((c) => c.length)).toEqual([100, 100, 50]);
    expect(repo.calls.flat()).toEqual(Array.from({ length: 250 }, (_, i) => `e${i}`));
  });
});
