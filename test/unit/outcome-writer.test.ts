import { describe, expect, it } from 'vitest';
import { outcomeKey } from '../../src/db/index.js';
import type { LeasedOutcome } from '../../src/domain/entities/delivery.js';
import { createOutcomeWriter } from '../../src/delivery/outcome/outcome-writer.js';

const entry = (id: string, token = 'tok'): LeasedOutcome => ({
  token,
  outcome: { id, status: 'delivered', events: [], suppress: [] },
});
const turn = () => new Promise((r) => setImmediate(r));

/** The repository seam: records each call's ids, answers when told, as the lease holder of all but `lost`. */
function fakeWrite(lost: Set<string> = new Set()) {
  const calls: string[][] = [];
  const pending: { resolve: () => void; reject: (err: Error) => void }[] = [];
  const write = (entries: LeasedOutcome[]) => {
    calls.push(entries.map((e) => e.outcome.id));
    return new Promise<Map<string, string>>((resolve, reject) => {
      const answer = new Map(
        entries
          .filter((e) => !lost.has(e.outcome.id))
          .map((e) => [outcomeKey(e.token, e.outcome.id), `acc_${e.outcome.id}`]),
      );
      pending.push({ resolve: () => resolve(answer), reject });
    });
  };
  const settle = async (how: 'resolve' | 'reject' = 'resolve') => {
    const next = pending.shift()!;
    if (how === 'resolve') next.resolve();
    else next.reject(new Error('database down'));
    await turn();
  };
  return { calls, write, settle };
}

describe('outcome writer (group commit of delivery outcomes)', () => {
  it('writes the outcomes of one event-loop turn in one statement, and never holds one back for a write in flight', async () => {
    const f = fakeWrite(new Set(['e3']));
    const writer = createOutcomeWriter(f.write);
    const first = ['e1', 'e2', 'e3'].map((id) => writer.record(entry(id)));
    expect(f.calls).toEqual([]);
    await turn();
    expect(f.calls).toEqual([['e1', 'e2', 'e3']]);
    // The first write is still in flight: the next outcome goes in a statement of its own at once.
    const second = writer.record(entry('e4'));
    await turn();
    expect(f.calls).toEqual([['e1', 'e2', 'e3'], ['e4']]);
    await f.settle();
    // e3's lease was lost: not recorded, so no account.
    expect(await Promise.all(first)).toEqual([{ accountId: 'acc_e1' }, { accountId: 'acc_e2' }, undefined]);
    await f.settle();
    expect(await second).toEqual({ accountId: 'acc_e4' });
  });

  it('a failed write fails every outcome in it and none of the next', async () => {
    const f = fakeWrite();
    const writer = createOutcomeWriter(f.write);
    const failed = [writer.record(entry('e1')), writer.record(entry('e2'))];
    await turn();
    const later = writer.record(entry('e3'));
    await turn();
    const rejections = Promise.all(failed.map((p) => expect(p).rejects.toThrow('database down')));
    await f.settle('reject');
    await rejections;
    await f.settle();
    expect(await later).toEqual({ accountId: 'acc_e3' });
  });

  it('answers by attempt: the same email under a stale token is not recorded', async () => {
    const writer = createOutcomeWriter(async () => new Map([[outcomeKey('live', 'e1'), 'acc_1']]));
    const [stale, live] = [writer.record(entry('e1', 'stale')), writer.record(entry('e1', 'live'))];
    expect(await live).toEqual({ accountId: 'acc_1' });
    expect(await stale).toBeUndefined();
  });
});

describe('outcome writer while the database is unreachable (issue 22, item 11)', () => {
  it('keeps a known outcome and writes it again until the database answers, never failing its caller', async () => {
    const calls: string[][] = [];
    let downFor = 3;
    const write = (entries: LeasedOutcome[]) => {
      calls.push(entries.map((e) => e.outcome.id));
      if (downFor-- > 0)
        return Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
      return Promise.resolve(new Map(entries.map((e) => [outcomeKey(e.token, e.outcome.id), `acc_${e.outcome.id}`])));
    };
    const retries: number[] = [];
    const writer = createOutcomeWriter(write, {
      firstWaitMs: 1,
      lastWaitMs: 4,
      onRetry: (_err, attempt) => retries.push(attempt),
    });
    const recorded = await Promise.all([writer.record(entry('e1')), writer.record(entry('e2'))]);
    expect(recorded).toEqual([{ accountId: 'acc_e1' }, { accountId: 'acc_e2' }]);
    expect(calls).toEqual([
      ['e1', 'e2'],
      ['e1', 'e2'],
      ['e1', 'e2'],
      ['e1', 'e2'],
    ]);
    expect(retries).toEqual([1, 2, 3]);
  });
});
