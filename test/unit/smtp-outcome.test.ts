import { describe, expect, it } from 'vitest';
import { classifySmtpError, rejectedRecipients } from '../../src/delivery/transport/smtp-outcome.js';

/** Errors shaped as nodemailer reports them. */
const smtpError = (responseCode: number, response: string, code = 'EENVELOPE') =>
  Object.assign(new Error(`Can't send mail - ${response}`), { responseCode, response, code });

describe('classifySmtpError', () => {
  it('550 is a hard bounce with the enhanced status parsed from the reply', () => {
    expect(
      classifySmtpError(smtpError(550, '550 5.1.1 <nobody@example.net>: Recipient address rejected: User unknown')),
    ).toEqual({
      kind: 'hard',
      code: 550,
      status: '5.1.1',
      diagnostic: '550 5.1.1 <nobody@example.net>: Recipient address rejected: User unknown',
    });
  });

  it('a 5xx without an enhanced status is 5.0.0', () => {
    expect(classifySmtpError(smtpError(554, '554 Transaction failed'))).toMatchObject({
      kind: 'hard',
      code: 554,
      status: '5.0.0',
    });
  });

  it('451 is soft (retried), with its enhanced status', () => {
    expect(classifySmtpError(smtpError(451, '451 4.7.1 Greylisted, try again later'))).toEqual({
      kind: 'soft',
      code: 451,
      status: '4.7.1',
      diagnostic: '451 4.7.1 Greylisted, try again later',
    });
  });

  it('a 4xx without an enhanced status is 4.0.0', () => {
    expect(classifySmtpError(smtpError(421, '421 Service not available'))).toMatchObject({
      kind: 'soft',
      code: 421,
      status: '4.0.0',
    });
  });

  it('a connection failure (no reply) is soft with 4.4.1 and code 0', () => {
    const err = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:25'), { code: 'ECONNECTION' });
    expect(classifySmtpError(err)).toEqual({
      kind: 'soft',
      code: 0,
      status: '4.4.1',
      diagnostic: 'connect ECONNREFUSED 127.0.0.1:25',
    });
  });

  it.each(['ETIMEDOUT', 'ESOCKET', 'EDNS', 'EAUTH'])('%s is soft', (code) => {
    expect(classifySmtpError(Object.assign(new Error(code), { code })).kind).toBe('soft');
  });

  it.each(['EMESSAGE', 'EMAXRECIPIENTS', 'ESTREAM'])('%s (the message itself cannot be sent) is hard', (code) => {
    expect(classifySmtpError(Object.assign(new Error('bad message'), { code }))).toMatchObject({
      kind: 'hard',
      code: 0,
      status: '5.6.0',
    });
  });

  it('does not mistake a number in the text for an enhanced status code', () => {
    expect(classifySmtpError(smtpError(550, '550 mailbox 15.12.2024 unavailable')).status).toBe('5.0.0');
  });

  it('never throws on odd input and caps the diagnostic at 1000 characters', () => {
    expect(classifySmtpError('boom')).toMatchObject({ kind: 'soft', code: 0, diagnostic: 'boom' });
    expect(classifySmtpError(smtpError(550, `550 ${'x'.repeat(5000)}`)).diagnostic).toHaveLength(1000);
  });
});

describe('rejectedRecipients', () => {
  it('pairs each refused recipient with its classified error', () => {
    const out = rejectedRecipients({
      rejected: ['a@example.net', { address: 'b@example.net' }],
      rejectedErrors: [smtpError(550, '550 5.1.1 no such user'), smtpError(452, '452 4.2.2 mailbox full')],
    });
    expect(out).toEqual([
      { address: 'a@example.net', failure: expect.objectContaining({ kind: 'hard', status: '5.1.1' }) },
      { address: 'b@example.net', failure: expect.objectContaining({ kind: 'soft', code: 452, status: '4.2.2' }) },
    ]);
  });

  it('treats a refusal without an error as a permanent 550', () => {
    expect(rejectedRecipients({ rejected: ['a@example.net'] })).toEqual([
      { address: 'a@example.net', failure: expect.objectContaining({ kind: 'hard', code: 550 }) },
    ]);
    expect(rejectedRecipients({})).toEqual([]);
  });
});
