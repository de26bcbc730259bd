import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

describe('DATABASE_URL', () => {
  it('is optional, and taken as given', () => {
    expect(loadConfig({}).databaseUrl).toBeUndefined();
    const url = 'postgres://mailer:secret@db.internal:5432/mailer';
    expect(loadConfig({ DATABASE_URL: url }).databaseUrl).toBe(url);
    expect(loadConfig({ DATABASE_URL: `${url}?connect_timeout=15` }).databaseUrl).toBe(`${url}?connect_timeout=15`);
  });

  it('refuses a connect_timeout that is not whole seconds from 1 to 3600, without showing the password', () => {
    for (const bad of ['abc', '1.5', '0', '-3', '3601', '']) {
      const load = () => loadConfig({ DATABASE_URL: `postgres://mailer:s3cret@db/mailer?connect_timeout=${bad}` });
      expect(load).toThrow(
        `DATABASE_URL's connect_timeout must be a whole number of seconds from 1 to 3600, got "${bad}"`,
      );
      expect(load).not.toThrow(/s3cret/);
    }
  });
});
