import { describe, expect, it } from 'vitest';
import { pool } from '../../src/delivery/queue/pool.js';

describe('pool (the delivery lanes)', () => {
  it('after a failure starts nothing new, and answers only once the calls in flight have ended', async () => {
    const started: number[] = [];
    const ended: number[] = [];
    let release!: () => void;
    const slow = new Promise<void>((r) => {
      release = r;
    });
    const run = pool([1, 2, 3, 4, 5], 2, async (n) => {
      started.push(n);
      if (n === 1) await slow; // a lane still recording its outcome
      if (n === 2) throw new Error('lease failed');
      ended.push(n);
    });
    let settled = false;
    run
      .then(
        () => {},
        () => {},
      )
      .finally(() => {
        settled = true;
      });
    await new Promise((r) => setTimeout(r, 20));
    expect(started).toEqual([1, 2]);
    expect(settled, 'the pool waits for the lane in flight').toBe(false);
    release();
    await expect(run).rejects.toThrow('lease failed');
    expect(ended).toEqual([1]);
    expect(started).toEqual([1, 2]);
  });
});
