import { describe, expect, it } from 'vitest';
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
    const readiness = createReadiness({ database: async () => {}, temporal: () => new Promise(() => {}) }, logger);
    const started = Date.now();
    expect(await readiness.down()).toEqual(['temporal']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(PROBE_TIMEOUT_MS - 50);
    expect(Date.now() - started).toBeLessThan(PROBE_TIMEOUT_MS + 2_000);
  });
});
