import { afterEach, describe, expect, it } from 'vitest';
import type { UsageDelta } from '../../src/domain/entities/api-keys.js';
import { createUsageRecorder, type UsageRecorder } from '../../src/services/usage-recorder.js';

let recorder: UsageRecorder | undefined;
afterEach(async () => {
  await recorder?.close();
  recorder = undefined;
});

describe('createUsageRecorder', () => {
  it('adds up requests, errors and emails per key and writes them on flush', async () => {
    const writes: UsageDelta[][] = [];
    recorder = createUsageRecorder(
      async (d) => void writes.push(d),
      () => {},
    );
    recorder.request('k1', false);
    recorder.request('k1', true);
    recorder.emailsSent('k1', 3);
    recorder.request('k2', true);
    await recorder.flush();
    expect(writes).toEqual([
      [
        { keyId: 'k1', requests: 2, errors: 1, emailsSent: 3 },
        { keyId: 'k2', requests: 1, errors: 1, emailsSent: 0 },
      ],
    ]);
    await recorder.flush();
    expect(writes).toHaveLength(1);
  });

  it("a flush waits for a write still in progress (the key listing sees the timer's write)", async () => {
    let release!: () => void;
    const committed: UsageDelta[] = [];
    recorder = createUsageRecorder(
      async (d) => {
        await new Promise<void>((r) => (release = r));
        committed.push(...d);
      },
      () => {},
    );
    recorder.request('k', false);
    const first = recorder.flush();
    let secondDone = false;
    const second = recorder.flush().then(() => void (secondDone = true));
    await new Promise((r) => setTimeout(r, 10));
    expect(secondDone).toBe(false);
    release();
    await first;
    await second;
    expect(committed).toEqual([{ keyId: 'k', requests: 1, errors: 0, emailsSent: 0 }]);
  });

  it('a failed write is reported and does not stop later flushes', async () => {
    const errors: unknown[] = [];
    let fail = true;
    const writes: UsageDelta[][] = [];
    recorder = createUsageRecorder(
      async (d) => {
        if (fail) throw new Error('db down');
        writes.push(d);
      },
      (err) => errors.push(err),
    );
    recorder.request('k', false);
    await recorder.flush();
    expect(errors).toHaveLength(1);
    fail = false;
    recorder.request('k', false);
    await recorder.flush();
    expect(writes).toEqual([[{ keyId: 'k', requests: 1, errors: 0, emailsSent: 0 }]]);
  });

  it('close writes what is left', async () => {
    const writes: UsageDelta[][] = [];
    const r = createUsageRecorder(
      async (d) => void writes.push(d),
      () => {},
    );
    r.emailsSent('k', 1);
    await r.close();
    expect(writes).toEqual([[{ keyId: 'k', requests: 0, errors: 0, emailsSent: 1 }]]);
  });
});
