import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

describe('SMTP submission settings', () => {
  it('listens on 2587 by default; 0 turns it off', () => {
    expect(loadConfig({}).submissionPort).toBe(2587);
    expect(loadConfig({ MAILER_SUBMISSION_PORT: '0' }).submissionPort).toBe(0);
    expect(() => loadConfig({ MAILER_SUBMISSION_PORT: '70000' })).toThrow(
      /MAILER_SUBMISSION_PORT must be an integer from 0 to 65535/,
    );
  });

  it('takes MAILER_TLS_CERT and MAILER_TLS_KEY together or not at all', () => {
    expect(loadConfig({ MAILER_TLS_CERT: '/c.pem', MAILER_TLS_KEY: '/k.pem' })).toMatchObject({
      tlsCert: '/c.pem',
      tlsKey: '/k.pem',
    });
    expect(loadConfig({})).toMatchObject({ tlsCert: undefined, tlsKey: undefined });
    expect(() => loadConfig({ MAILER_TLS_CERT: '/c.pem' })).toThrow(
      /MAILER_TLS_CERT and MAILER_TLS_KEY must be set together/,
    );
    expect(() => loadConfig({ MAILER_TLS_KEY: '/k.pem' })).toThrow(/must be set together/);
  });
});
