import { describe, expect, it, vi } from 'vitest';
import { createHitBatcher, HitDroppedError } from '../../src/services/hit-batcher.js';

/** A write whose calls stay pending until the test settles them. */
function controlledWrite() {
  const calls: { hit: string; count: number; settle: (err?: Error) => void }[] = [];
  const write = vi.fn(
    (hit: string, count: number) =>
      new Promise<void>((resolve, reject) => {
        calls.push({ hit, count, settle: (err) => (err ? reject(err) : resolve()) });
      }),
  );
  return { calls, write };
}
const tick = () => new Promise((r) => setImmediate(r));

describe('hit batcher', () => {
  it('folds the hits of a target that arrive during its write into one next write with their count', async () => {
    const { calls, write } = controlledWrite();
    const batcher = createHitBatcher<string>({ write, maxConcurrent: 8, maxWaitingTargets: 100, onError: vi.fn() });
    const first = batcher.add('t', 'h1');
    const rest = Array.from({ length: 999 }, (_, i) => batcher.add('t', `h${i + 2}`));
    await tick();
    expect(calls.map((c) => [c.hit, c.count])).toEqual([['h1', 1]]);

    calls[0]!.settle();
    await first;
    await tick();
    expect(calls.map((c) => [c.hit, c.count])).toEqual([
      ['h1', 1],
      ['h2', 999],
    ]);
    let restDone = false;
    void Promise.all(rest).then(() => (restDone = true));
    await tick();
    expect(restDone).toBe(false);
    calls[1]!.settle();
    await Promise.all(rest);
    expect(write).toHaveBeenCalledTimes(2);
  });

  it('runs at most maxConcurrent writes at once, starting the others in arrival order', async () => {
    const { calls, write } = controlledWrite();
    const batcher = createHitBatcher<string>({ write, maxConcurrent: 2, maxWaitingTargets: 100, onError: vi.fn() });
    for (const t of ['a', 'b', 'c', 'd']) void batcher.add(t, t);
    await tick();
    expect(calls.map((c) => c.hit)).toEqual(['a', 'b']);
    calls[1]!.settle();
    await tick();
    expect(calls.map((c) => c.hit)).toEqual(['a', 'b', 'c']);
    calls[0]!.settle();
    await tick();
    expect(calls.map((c) => c.hit)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('drops and reports a hit of a new target when too many targets wait; a known one still joins its batch', async () => {
    const { calls, write } = controlledWrite();
    const onError = vi.fn();
    const batcher = createHitBatcher<string>({ write, maxConcurrent: 1, maxWaitingTargets: 2, onError });
    void batcher.add('running', 'running');
    void batcher.add('w1', 'w1');
    void batcher.add('w2', 'w2');
    await batcher.add('w3', 'w3');
    expect(onError).toHaveBeenCalledWith(expect.any(HitDroppedError));
    void batcher.add('w1', 'w1 again');
    for (const c of calls) c.settle();
    await tick();
    for (const c of calls) c.settle();
    await tick();
    expect(calls.map((c) => [c.hit, c.count])).toEqual([
      ['running', 1],
      ['w1', 2],
      ['w2', 1],
    ]);
    expect(onError).toHaveBeenCalledTimes(1);
  });

  it('reports a failed write, resolves its hits, and goes on with the next batch', async () => {
    const { calls, write } = controlledWrite();
    const onError = vi.fn();
    const batcher = createHitBatcher<string>({ write, maxConcurrent: 1, maxWaitingTargets: 10, onError });
    const failed = batcher.add('t', 'a');
    const next = batcher.add('t', 'b');
    await tick();
    const failure = new Error('database down');
    calls[0]!.settle(failure);
    await failed;
    expect(onError).toHaveBeenCalledWith(failure);
    await tick();
    calls[1]!.settle();
    await next;
    expect(calls.map((c) => c.hit)).toEqual(['a', 'b']);
  });
});
