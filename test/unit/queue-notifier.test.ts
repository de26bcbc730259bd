import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createQueueNotifier, NOTIFY_WINDOW_MS } from '../../src/app/queue-notifier.js';
import { QUEUE_CHANNEL } from '../../src/delivery/queue/dispatcher.js';

function setup() {
  const notified: number[] = [];
  const sql = {
    notify: vi.fn(async (channel: string) => {
      expect(channel).toBe(QUEUE_CHANNEL);
      notified.push(Date.now());
    }),
  };
  const local = { poke: vi.fn() };
  const logger = { warn: vi.fn() };
  const queued = createQueueNotifier(sql as never, local, logger);
  return { queued, sql, local, logger, notified };
}

describe('queue notifier', () => {
  beforeEach(() => vi.useFakeTimers({ now: 0 }));
  afterEach(() => vi.useRealTimers());

  it('notifies the first entry after a quiet spell at once', () => {
    const { queued, sql, local } = setup();
    queued();
    expect(sql.notify).toHaveBeenCalledTimes(1);
    expect(local.poke).toHaveBeenCalledTimes(1);
  });

  it('folds the entries of a window into one NOTIFY at its end, and pokes the local dispatcher for each', async () => {
    const { queued, notified, local } = setup();
    queued();
    for (let t = 7; t < NOTIFY_WINDOW_MS; t += 7) {
      await vi.advanceTimersByTimeAsync(7);
      queued();
    }
    expect(notified).toEqual([0]);
    await vi.advanceTimersByTimeAsync(NOTIFY_WINDOW_MS - Date.now());
    expect(notified).toEqual([0, NOTIFY_WINDOW_MS]);
    expect(local.poke.mock.calls.length).toBeGreaterThan(10);
  });

  it('sends no NOTIFY at a window end that nothing was queued in', async () => {
    const { queued, notified } = setup();
    queued();
    await vi.advanceTimersByTimeAsync(10 * NOTIFY_WINDOW_MS);
    expect(notified).toEqual([0]);
    queued();
    expect(notified).toEqual([0, 10 * NOTIFY_WINDOW_MS]);
  });

  it('under steady load sends one NOTIFY per window', async () => {
    const { queued, notified } = setup();
    for (let t = 0; t < 20 * NOTIFY_WINDOW_MS; t += 4) {
      queued();
      await vi.advanceTimersByTimeAsync(4);
    }
    await vi.advanceTimersByTimeAsync(NOTIFY_WINDOW_MS);
    expect(notified.length).toBeGreaterThanOrEqual(20);
    expect(notified.length).toBeLessThanOrEqual(21);
    for (let i = 1; i < notified.length; i++)
      expect(notified[i]! - notified[i - 1]!).toBeGreaterThanOrEqual(NOTIFY_WINDOW_MS);
  });

  it('logs a failed NOTIFY and keeps notifying', async () => {
    const { queued, sql, logger } = setup();
    sql.notify.mockRejectedValueOnce(new Error('connection lost'));
    queued();
    await vi.advanceTimersByTimeAsync(NOTIFY_WINDOW_MS + 1);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    queued();
    expect(sql.notify).toHaveBeenCalledTimes(2);
  });
});
