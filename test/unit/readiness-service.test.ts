import { describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { createReadiness, PROBE_TIMEOUT_MS } from '../../src/services/readiness-service.js';

const logger = createLogger('silent');

describe('createReadiness', () => {
  it('names the components whose probe fails, in a fixed order, and nothing when all answer', async () => {
    const fail = async () => {
      throw new Error('connect ECONNREFUSED 10.0.0.5:5432');
    };
    expect(await createReadiness({ database: async () => {}, temporal: async () => {} }, logger).down()).toEqual([]);
    expect(await createReadiness({ database: fail, temporal: async () => {} }, logger).down()).toEqual(['database']);
    expect(await createReadiness({ database: fail, temporal: fail }, logger).down()).toEqual(['database', 'temporal']);
  });

  it('counts a probe that does not answer in time as down, without waiting for it', async () => {
    // On a fake clock: not answered a millisecond before the timeout, answered at it (and no 3 s of the run spent).
    vi.useFakeTimers();
    try {
      const readiness = createReadiness({ database: async () => {}, temporal: () => new Promise(() => {}) }, logger);
      let down: string[] | undefined;
      const answered = readiness.down().then((d) => (down = d));
      await vi.advanceTimersByTimeAsync(PROBE_TIMEOUT_MS - 1);
      expect(down).toBeUndefined();
      await vi.advanceTimersByTimeAsync(1);
      expect(down).toEqual(['temporal']);
      await answered;
    } finally {
      vi.useRealTimers();
    }
  });
});
