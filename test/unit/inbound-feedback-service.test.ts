import fs from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { EmailStatus } from '../../src/domain/catalog.js';
import { createReportTokens } from '../../src/mail/report-token.js';
import { makeReturnPath } from '../../src/mail/return-path.js';
import { createInboundFeedbackService } from '../../src/services/inbound-feedback-service.js';

const fixture = (name: string) => fs.readFileSync(path.join(import.meta.dirname, '../fixtures/feedback', name));
/** The secret the fixtures' X-Mail-Report-Token headers were signed with. */
const tokens = createReportTokens('feedback-fixtures-report-secret');
const MIXED_ID = 'em_01jbq7m3k2x9f5v8r4t6w0y2zh';
const POSTFIX_ID = 'em_01jbq7m3k2x9f5v8r4t6w0y2zd';
const YAHOO_ID = 'em_01jbq7m3k2x9f5v8r4t6w0y2zc';
const HEADERS_ONLY_ID = 'em_01jbq7m3k2x9f5v8r4t6w0y2zf';

interface FakeEmail { id: string; status: EmailStatus; recipients: string[]; headerMessageId?: string }

function setup(...emails: FakeEmail[]) {
  const calls: { kind: string; input: unknown }[] = [];
  const service = createInboundFeedbackService({
    emails: {
      findForFeedback: async (ref) => {
        const e = emails.find((x) => x.id === ref.emailId || (x.headerMessageId ?? `<${x.id}@example.com>`) === ref.headerMessageId);
        return e && { ...e, headerMessageId: e.headerMessageId ?? `<${e.id}@example.com>` };
      },
    },
    feedback: {
      complaint: async (input) => (calls.push({ kind: 'complaint', input }), true),
      bounce: async (input) => (calls.push({ kind: 'bounce', input }), true),
    },
    tokens,
    logger: pino({ level: 'silent' }),
  });
  return { service, calls };
}

describe('inbound feedback', () => {
  it('records one bounce per bounce type of a report', async () => {
    const { service, calls } = setup({ id: MIXED_ID, status: 'delivered', recipients: ['full@outlook.example', 'gone@outlook.example'] });
    expect(await service.receive(fixture('dsn-mixed.eml'))).toBe('recorded');
    expect(calls).toEqual([
      { kind: 'bounce', input: { emailId: MIXED_ID, bounceType: 'Permanent', recipients: [expect.objectContaining({ email_address: 'gone@outlook.example', status: '5.1.10' })] } },
      { kind: 'bounce', input: { emailId: MIXED_ID, bounceType: 'Transient', recipients: [expect.objectContaining({ email_address: 'full@outlook.example', status: '4.2.2' })] } },
    ]);
    expect(Object.keys((calls[0]!.input as { recipients: object[] }).recipients[0]!).sort()).toEqual(['diagnostic_code', 'email_address', 'status']);
  });

  it('records nothing for recipients a DSN names that the email was not sent to', async () => {
    const { service, calls } = setup({ id: MIXED_ID, status: 'delivered', recipients: ['gone@outlook.example'] });
    expect(await service.receive(fixture('dsn-mixed.eml'))).toBe('recorded');
    expect(calls).toEqual([{ kind: 'bounce', input: expect.objectContaining({ bounceType: 'Permanent', recipients: [expect.objectContaining({ email_address: 'gone@outlook.example' })] }) }]);

    const other = setup({ id: MIXED_ID, status: 'delivered', recipients: ['someone@example.net'] });
    expect(await other.service.receive(fixture('dsn-mixed.eml'))).toBe('ignored');
    expect(other.calls).toEqual([]);
  });

  it('takes a forwarded recipient by its Original-Recipient', async () => {
    const raw = fixture('dsn-postfix.eml').toString().replace('Final-Recipient: rfc822; nobody@example.net', 'Final-Recipient: rfc822; elsewhere@forward.example\nOriginal-Recipient: rfc822; nobody@example.net');
    const { service, calls } = setup({ id: POSTFIX_ID, status: 'delivered', recipients: ['nobody@example.net'] });
    expect(await service.receive(Buffer.from(raw))).toBe('recorded');
    expect(calls).toEqual([{ kind: 'bounce', input: expect.objectContaining({ recipients: [expect.objectContaining({ email_address: 'nobody@example.net' })] }) }]);
  });

  it('a complaint names only the email\'s recipients, else its one recipient, else nobody', async () => {
    const one = setup({ id: YAHOO_ID, status: 'delivered', recipients: ['jane.doe@yahoo.com'] });
    await one.service.receive(fixture('arf-yahoo.eml'));
    expect(one.calls).toEqual([{ kind: 'complaint', input: { emailId: YAHOO_ID, recipients: ['jane.doe@yahoo.com'], feedbackType: 'abuse' } }]);

    const forwarded = setup({ id: YAHOO_ID, status: 'delivered', recipients: ['alias@example.org'] });
    await forwarded.service.receive(fixture('arf-yahoo.eml'));
    expect(forwarded.calls).toEqual([{ kind: 'complaint', input: expect.objectContaining({ recipients: ['alias@example.org'] }) }]);

    const several = setup({ id: HEADERS_ONLY_ID, status: 'delivered', recipients: ['a@example.net', 'b@example.net'] });
    await several.service.receive(fixture('arf-headers-only.eml'), { rcptTo: [makeReturnPath(tokens, HEADERS_ONLY_ID, 'rp.example.com')] });
    expect(several.calls).toEqual([{ kind: 'complaint', input: { emailId: HEADERS_ONLY_ID, recipients: [], feedbackType: 'fraud' } }]);
  });

  it('asks to retry while the delivery is not recorded, and ignores what it cannot use', async () => {
    await expect(setup({ id: POSTFIX_ID, status: 'pending', recipients: ['nobody@example.net'] }).service.receive(fixture('dsn-postfix.eml'))).rejects.toThrow(/try again later/);
    const { service, calls } = setup();
    expect(await service.receive(fixture('dsn-postfix.eml'))).toBe('unknown-email');
    // A delay warning is no report: at the return path it is ignored; with only a quoted token, refused.
    expect(await service.receive(fixture('dsn-delayed.eml'), { rcptTo: [makeReturnPath(tokens, 'em_01jbq7m3k2x9f5v8r4t6w0y2zg', 'rp.example.com')] })).toBe('ignored');
    expect(await service.receive(fixture('dsn-delayed.eml'))).toBe('refused');
    expect(calls).toEqual([]);
  });

});

// Proof: a report is taken only with a valid report token, quoted or in the return path it was mailed to.
describe('inbound feedback', () => {
  describe('refuses what carries no proof, and records nothing', () => {
    const email = { id: POSTFIX_ID, status: 'delivered' as const, recipients: ['nobody@example.net'] };
    const postfix = fixture('dsn-postfix.eml').toString();
    const token = tokens.sign(POSTFIX_ID);
    const cases: [string, string, string[]][] = [
      ['no token, right email id', postfix.replace(/^X-Mail-Report-Token: .*\n/m, ''), []],
      ['a token of another key', postfix.replace(token, createReportTokens('someone-elses-secret-key').sign(POSTFIX_ID)), []],
      ['a token of another email', postfix.replace(token, tokens.sign(YAHOO_ID)), []],
      ['a tampered token', postfix.replace(token, `${token.slice(0, -2)}aa`), []],
      ['a valid token, but a forged quoted one', postfix.replace(token, `${token.slice(0, -2)}aa`), [makeReturnPath(tokens, POSTFIX_ID, 'rp.example.com')]],
      ['a return path of another email', postfix.replace(/^X-Mail-Report-Token: .*\n/m, ''), [makeReturnPath(tokens, YAHOO_ID, 'rp.example.com')]],
      ['a return path and a quoted token of different emails', postfix, [makeReturnPath(tokens, YAHOO_ID, 'rp.example.com')]],
      ['a valid token quoted with another email\'s Message-ID', postfix.replace(`<${POSTFIX_ID}@example.com>`, `<${YAHOO_ID}@example.com>`), []],
      ['mail that is no report', fixture('autoreply.eml').toString(), []],
      ['junk', 'not a message\r\n\r\n\0', []],
    ];
    it.each(cases)('%s', async (_name, raw, rcptTo) => {
      const { service, calls } = setup(email, { id: YAHOO_ID, status: 'delivered', recipients: ['jane.doe@yahoo.com'] });
      expect(await service.receive(Buffer.from(raw), { rcptTo })).toBe('refused');
      expect(calls).toEqual([]);
    });
  });

  it('takes a report mailed to the email\'s return path even without the original\'s headers', async () => {
    const raw = fixture('dsn-postfix.eml').toString();
    const bare = raw.slice(0, raw.indexOf('Content-Description: Undelivered Message')).replace(/\n--[^\n]*\n$/, '\n--3F1B2C0A1D.1741083611/mx.example.net--\n');
    const { service, calls } = setup({ id: POSTFIX_ID, status: 'delivered', recipients: ['nobody@example.net'] });
    expect(await service.receive(Buffer.from(bare))).toBe('refused');
    expect(await service.receive(Buffer.from(bare), { rcptTo: [makeReturnPath(tokens, POSTFIX_ID, 'rp.example.com').toUpperCase()] })).toBe('recorded');
    expect(calls).toHaveLength(1);
  });

  it('takes return paths with valid tokens only at RCPT TO, and any other address', () => {
    const { service } = setup();
    expect(service.acceptsRecipient(makeReturnPath(tokens, POSTFIX_ID, 'rp.example.com'))).toBe(true);
    expect(service.acceptsRecipient(`b-${POSTFIX_ID}-aaaaaaaaaaaaaaaaaaaaaaaa@rp.example.com`)).toBe(false);
    expect(service.acceptsRecipient('fbl@example.com')).toBe(true);
  });
});
