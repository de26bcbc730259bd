import { describe, expect, it } from 'vitest';
import { quotaExceeded } from '../../src/domain/quota.js';
import { AppError, ERROR_TABLE, type ErrorKind } from '../../src/errors.js';
import { smtpReplyFor } from '../../src/inbound/smtp-replies.js';

describe('SMTP submission answers AppErrors from one table', () => {
  it.each([
    ['unauthorized', 535, '5.7.8'],
    ['permission_denied', 550, '5.7.1'],
    ['validation', 550, '5.6.0'],
    ['payload_too_large', 552, '5.3.4'],
    ['rate_limited', 451, '4.7.0'],
    ['unavailable', 451, '4.3.0'],
    ['internal', 451, '4.3.0'],
  ] as const)("%s is %d %s, with the error's message", (kind, code, enhanced) => {
    const reply = smtpReplyFor(new AppError(kind, `the ${kind} message`));
    expect(reply.responseCode).toBe(code);
    expect(reply.message).toBe(`${enhanced} the ${kind} message`);
  });

  it('answers every kind a client may retry (errors.ts) with a 4xx, and every other with a 5xx', () => {
    for (const kind of Object.keys(ERROR_TABLE) as ErrorKind[]) {
      const { responseCode } = smtpReplyFor(new AppError(kind, 'x'));
      expect(responseCode < 500, kind).toBe(ERROR_TABLE[kind].retryable);
    }
  });

  it('answers the daily quota 452 4.4.5 with its numbers and when to retry', () => {
    const reply = smtpReplyFor(quotaExceeded(5, 5, new Date('2030-01-01T23:59:00Z')));
    expect(reply.responseCode).toBe(452);
    expect(reply.message).toBe('4.4.5 daily quota exceeded (5/5), resets at 2030-01-02T00:00:00.000Z (retry in 60 s)');
  });

  it('answers an unknown failure 451 without its text', () => {
    const reply = smtpReplyFor(new Error('password=hunter2 connection refused'));
    expect(reply.responseCode).toBe(451);
    expect(reply.message).not.toContain('hunter2');
  });
});
