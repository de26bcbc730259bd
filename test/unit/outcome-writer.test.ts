import { describe, expect, it } from 'vitest';
import { outcomeKey, type LeasedOutcome } from '../../src/db/repos/delivery-outcomes.js';
import { createOutcomeWriter } from '../../src/temporal/outcome-writer.js';

const entry = (id: string, token = 'tok'): LeasedOutcome => ({ token, outcome: { id, status: 'delivered', events: [], suppress: [] } });

/** The repository seam: records each call's ids, answers when told, as the lease holder of all but `lost`. */
function fakeWrite(lost: Set<string> = new Set()) {
  const calls: string[][] = [];
  const pending: { resolve: () => void; reject: (err: Error) => void }[] = [];
  const write = (entries: LeasedOutcome[]) => {
    calls.push(entries.map((e) => e.outcome.id));
    return new Promise<Map<string, string>>((resolve, reject) => {
      const answer = new Map(entries.filter((e) => !lost.has(e.outcome.id)).map((e) => [outcomeKey(e.token, e.outcome.id), `acc_${e.outcome.id}`]));
      pending.push({ resolve: () => resolve(answer), reject });
    });
  };
  const settle = async (how: 'resolve' | 'reject' = 'resolve') => {
    const next = pending.shift()!;
    if (how === 'resolve') next.resolve();
    else next.reject(new Error('database down'));
    await new Promise((r) => setImmediate(r));
  };
  return { calls, write, settle };
}

describe('outcome writer (group commit of delivery outcomes)', () => {
  it('writes a lone outcome at once, and the outcomes that arrive during a write together in the next', async () => {
    const f = fakeWrite(new Set(['e4']));
    const writer = createOutcomeWriter(f.write);
    const first = writer.record(entry('e1'));
    expect(f.calls).toEqual([['e1']]);
    const later = ['e2', 'e3', 'e4'].map((id) => writer.record(entry(id)));
    expect(f.calls).toHaveLength(1);
    await f.settle();
    expect(await first).toEqual({ accountId: 'acc_e1' });
    expect(f.calls).toEqual([['e1'], ['e2', 'e3', 'e4']]);
    await f.settle();
    // e4's lease was lost: not recorded, so no account.
    expect(await Promise.all(later)).toEqual([{ accountId: 'acc_e2' }, { accountId: 'acc_e3' }, undefined]);
    // Idle again: the next outcome is written at once.
    const again = writer.record(entry('e5'));
    expect(f.calls).toHaveLength(3);
    await f.settle();
    expect(await again).toEqual({ accountId: 'acc_e5' });
  });

  it('a failed write fails every outcome in it and none of the next', async () => {
    const f = fakeWrite();
    const writer = createOutcomeWriter(f.write);
    const first = writer.record(entry('e1'));
    const second = writer.record(entry('e2'));
    const firstFailed = expect(first).rejects.toThrow('database down');
    await f.settle('reject');
    await firstFailed;
    await f.settle();
    expect(await second).toEqual({ accountId: 'acc_e2' });
  });

  it('answers by attempt: the same email under a stale token is not recorded', async () => {
    const f = fakeWrite();
    const writer = createOutcomeWriter(async (entries) => {
      f.calls.push(entries.map((e) => e.outcome.id));
      return new Map([[outcomeKey('live', 'e1'), 'acc_1']]);
    });
    const [stale, live] = [writer.record(entry('e1', 'stale')), writer.record(entry('e1', 'live'))];
    expect(await live).toEqual({ accountId: 'acc_1' });
    expect(await stale).toBeUndefined();
  });
});
