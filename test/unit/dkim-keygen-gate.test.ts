import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { gated } from '../../src/services/dkim-provisioning.js';

/** A generator whose calls finish when the test says, counting how many run at once. */
function controlled() {
  const pending: (() => void)[] = [];
  let running = 0;
  let most = 0;
  const generate = async () => {
    running++;
    most = Math.max(most, running);
    await new Promise<void>((resolve) => pending.push(resolve));
    running--;
    return 'pair';
  };
  return { generate, finishOne: () => pending.shift()?.(), most: () => most, started: () => pending.length };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('DKIM key generation gate', () => {
  it('runs at most `atOnce` at a time, the rest in order, and refuses a call past the waiting line with a 429', async () => {
    const g = controlled();
    const generate = gated(g.generate, 1, 2);
    const calls = [generate(), generate(), generate()];
    await settle();
    expect(g.started()).toBe(1);

    const refused = await generate().catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).kind).toBe('rate_limited');
    expect((refused as AppError).retryAfterSeconds).toBeGreaterThan(0);

    for (let n = 0; n < 3; n++) {
      g.finishOne();
      await settle();
    }
    expect(await Promise.all(calls)).toEqual(['pair', 'pair', 'pair']);
    expect(g.most()).toBe(1);
    // The line is empty again: a new call runs at once.
    const next = generate();
    await settle();
    expect(g.started()).toBe(1);
    g.finishOne();
    expect(await next).toBe('pair');
  });

  it('frees its slot when a generation fails', async () => {
    let fail = true;
    const generate = gated(
      async () => {
        if (fail) throw new Error('no entropy');
        return 'pair';
      },
      1,
      0,
    );
    await expect(generate()).rejects.toThrow('no entropy');
    fail = false;
    expect(await generate()).toBe('pair');
  });
});
