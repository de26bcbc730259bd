import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { createStartRetrier, type StartRetrier } from '../../src/temporal/start-retrier.js';

const logger = createLogger('silent');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let retrier: StartRetrier | undefined;
afterEach(() => retrier?.stop());

describe('createStartRetrier', () => {
  it('retries a failing start with growing waits until it succeeds, then forgets it', async () => {
    retrier = createStartRetrier({ logger, firstDelayMs: 20, maxDelayMs: 80 });
    const calls: number[] = [];
    const t0 = Date.now();
    retrier.retry('job-1', async () => {
      calls.push(Date.now() - t0);
      if (calls.length < 4) throw new Error('Temporal down');
    });
    expect(retrier.pending()).toBe(1);
    for (let waited = 0; retrier.pending() > 0 && waited < 3_000; waited += 20) await sleep(20);
    expect(calls).toHaveLength(4);
    // 20, 40, 80, 80 ms apart: the waits double up to the cap.
    const gaps = calls.map((t, i) => t - (calls[i - 1] ?? 0));
    expect(gaps[0]!).toBeGreaterThanOrEqual(18);
    expect(gaps[1]!).toBeGreaterThanOrEqual(38);
    expect(gaps[2]!).toBeGreaterThanOrEqual(78);
    expect(gaps[3]!).toBeGreaterThanOrEqual(78);
    expect(gaps[3]!).toBeLessThan(400);
    expect(retrier.pending()).toBe(0);
  });

  it('runs one loop per job however often it is handed in, and stop ends every loop', async () => {
    // Fake timers: the count of attempts in a time span is then exact, whatever else the machine is doing.
    vi.useFakeTimers();
    try {
      retrier = createStartRetrier({ logger, firstDelayMs: 10, maxDelayMs: 10 });
      let calls = 0;
      const failing = async () => {
        calls += 1;
        throw new Error('down');
      };
      retrier.retry('job-1', failing);
      retrier.retry('job-1', failing);
      await vi.advanceTimersByTimeAsync(55);
      const during = calls;
      // One loop makes about 5 attempts in 55 ms at 10 ms apart; two loops would make about 10.
      expect(during).toBeGreaterThanOrEqual(2);
      expect(during).toBeLessThanOrEqual(6);
      retrier.stop();
      expect(retrier.pending()).toBe(0);
      await vi.advanceTimersByTimeAsync(50);
      expect(calls).toBeLessThanOrEqual(during + 1);
    } finally {
      vi.useRealTimers();
    }
  });
});
