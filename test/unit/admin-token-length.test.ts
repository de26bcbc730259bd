import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN_MIN_LENGTH, loadConfig } from '../../src/config.js';

describe('the admin token length', () => {
  it(`refuses a MAILER_ADMIN_TOKEN shorter than ${ADMIN_TOKEN_MIN_LENGTH} characters, naming the variable and the fix`, () => {
    const short = 'a'.repeat(ADMIN_TOKEN_MIN_LENGTH - 1);
    expect(() => loadConfig({ MAILER_ADMIN_TOKEN: short })).toThrow(
      /MAILER_ADMIN_TOKEN must be at least 32 characters long, got 31.*openssl rand -hex 32/,
    );
    expect(loadConfig({ MAILER_ADMIN_TOKEN: 'a'.repeat(ADMIN_TOKEN_MIN_LENGTH) }).adminToken).toBe(
      'a'.repeat(ADMIN_TOKEN_MIN_LENGTH),
    );
    // Unset (or empty): one is generated at start.
    expect(loadConfig({}).adminToken).toBeUndefined();
    expect(loadConfig({ MAILER_ADMIN_TOKEN: '' }).adminToken).toBeUndefined();
  });

  it('does not echo the refused token', () => {
    expect(() => loadConfig({ MAILER_ADMIN_TOKEN: 'my-secret-but-short' })).toThrow(
      expect.objectContaining({
        message: expect.not.stringContaining('my-secret-but-short') as unknown,
      }),
    );
  });
});
