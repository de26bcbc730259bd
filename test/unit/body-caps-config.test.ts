import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { BODY_LIMITS } from '../../src/domain/limits.js';

describe('request bytes in flight settings', () => {
  it('default to 256 MiB per process and 64 MiB per key: a body of the largest size (a batch) always fits', () => {
    const config = loadConfig({});
    expect([config.bodyMibInFlight, config.bodyMibInFlightPerKey]).toEqual([256, 64]);
    expect(config.bodyMibInFlightPerKey * 1024 * 1024).toBeGreaterThanOrEqual(BODY_LIMITS.batch);
  });

  it('refuse a key cap below the batch limit, and a process cap below the key cap, naming the setting', () => {
    expect(loadConfig({ MAILER_BODY_MIB_IN_FLIGHT: '1024', MAILER_BODY_MIB_IN_FLIGHT_PER_KEY: '128' })).toMatchObject({
      bodyMibInFlight: 1024,
      bodyMibInFlightPerKey: 128,
    });
    expect(() => loadConfig({ MAILER_BODY_MIB_IN_FLIGHT_PER_KEY: '32' })).toThrow(
      /MAILER_BODY_MIB_IN_FLIGHT_PER_KEY must be an integer from 64 to/,
    );
    expect(() => loadConfig({ MAILER_BODY_MIB_IN_FLIGHT: '100', MAILER_BODY_MIB_IN_FLIGHT_PER_KEY: '128' })).toThrow(
      'MAILER_BODY_MIB_IN_FLIGHT (100) must be at least MAILER_BODY_MIB_IN_FLIGHT_PER_KEY (128)',
    );
  });
});
