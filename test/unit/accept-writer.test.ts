import { describe, expect, it } from 'vitest';
import type { NewEmail } from '../../src/domain/entities/emails.js';
import { createAcceptWriter } from '../../src/services/accept-writer.js';

const turn = () => new Promise((r) => setImmediate(r));
const email = (id: string, accountId = 'acc_a') => ({ id, accountId }) as NewEmail;

/** The repository seam: records each statement's email ids; refuses any statement holding an id in `refused`. */
function fakeEmails(refused: Set<string> = new Set()) {
  const calls: string[][] = [];
  const options: unknown[] = [];
  return {
    calls,
    options,
    async accept(emails: NewEmail[], opts: { enqueue: boolean }): Promise<void> {
      calls.push(emails.map((e) => e.id));
      options.push(opts);
      await turn();
      if (emails.some((e) => refused.has(e.id))) throw new Error(`refused ${emails.map((e) => e.id).join(',')}`);
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

  it('at most 100 emails a statement', async () => {
    const repo = fakeEmails();
    const write = createAcceptWriter(repo);
    const all = Array.from({ length: 250 }, (_, i) => write(email(`e${i}`)));
    expect((await outcomes(all)).every((o) => o === 'ok')).toBe(true);
    expect(repo.calls.map((c) => c.length)).toEqual([100, 100, 50]);
    expect(repo.calls.flat()).toEqual(Array.from({ length: 250 }, (_, i) => `e${i}`));
  });
});
