import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { retryAtStart } from '../../src/retry-at-start.js';

const logger = createLogger('silent');

describe('retryAtStart', () => {
  it('retries transient failures until the attempt succeeds, and ends at once on any other', async () => {
    let calls = 0;
    const result = await retryAtStart({
      what: 'database',
      logger,
      firstDelayMs: 10,
      isTransient: (err) => (err as Error).message === 'down',
      attempt: async () => {
        calls += 1;
        if (calls < 3) throw new Error('down');
        return 'up';
      },
    });
    expect(result).toBe('up');
    expect(calls).toBe(3);

    calls = 0;
    await expect(
      retryAtStart({
        what: 'database',
        logger,
        firstDelayMs: 10,
        isTransient: (err) => (err as Error).message === 'down',
        attempt: async () => {
          calls += 1;
          throw new Error('password authentication failed');
        },
      }),
    ).rejects.toThrow('password authentication failed');
    expect(calls).toBe(1);
  });
});
