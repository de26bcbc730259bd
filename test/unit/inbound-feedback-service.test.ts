import fs from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { EmailStatus } from '../../src/domain/catalog.js';
import { createReportTokens } from '../../src/delivery/message/report-token.js';
import { makeReturnPath } from '../../src/delivery/message/return-path.js';
import { createInboundFeedbackService } from '../../src/services/inbound-feedback-service.js';

const fixture = (name: string) => fs.readFileSync(path.join(import.meta.dirname, '../fixtures/feedback', name));
/** The secret the fixtures' X-Mail-Report-Token headers were signed with. */
const tokens = createReportTokens('feedback-fixtures-report-secret');
const MIXED_ID = 'em_01jbq7m3k2x9f5v8r4t6w0y2zh';
const POSTFIX_ID = 'em_01jbq7m3k2x9f5v8r4t6w0y2zd';
const YAHOO_ID = 'em_01jbq7m3k2x9f5v8r4t6w0y2zc';
const HEADERS_ONLY_ID = 'em_01jbq7m3k2x9f5v8r4t6w0y2zf';

interface FakeEmail {
  id: string;
  status: EmailStatus;
  recipients: string[];
  headerMessageId?: string;
}

/** `trustedFrom`: the connecting address a trusted feedback loop reports from (MAILER_FBL_SOURCES). */
function setup(...emails: FakeEmail[]) {
  const trustedFrom = '192.0.2.7';
  const calls: { kind: string; input: unknown }[] = [];
  const service = createInboundFeedbackService({
    emails: {
      findForFeedback: async (ref) => {
        const e = emails.find(
          (x) => x.id === ref.emailId || (x.headerMessageId ?? `<${x.id}@example.com>`) === ref.headerMessageId,
        );
        return e && { ...e, headerMessageId: e.headerMessageId ?? `<${e.id}@example.com>` };
      },
    },
    feedback: {
      complaint: async (input) => (calls.push({ kind: 'complaint', input }), true),
      bounce: async (input) => (calls.push({ kind: 'bounce', input }), true),
    },
    tokens,
    sources: { trusted: async (_raw, remoteAddress) => remoteAddress === trustedFrom },
    logger: pino({ level: 'silent' }),
  });
  return { service, calls, trustedFrom };
}

describe('inbound feedback', () => {
  const RECIPIENTS = ['full@outlook.example', 'gone@outlook.example'];

  it("a DSN mailed to one recipient's return path records that recipient's bounce only", async () => {
    const { service, calls } = setup({ id: MIXED_ID, status: 'delivered', recipients: RECIPIENTS });
    // The report gives up on gone@ for good and on full@ for now; it came back for gone@'s copy (the 2nd recipient).
    expect(
      await service.receive(fixture('dsn-mixed.eml'), {
        rcptTo: [makeReturnPath(tokens, MIXED_ID, 1, 'rp.example.com')],
      }),
    ).toBe('recorded');
    expect(calls).toEqual([
      {
        kind: 'bounce',
        input: {
          emailId: MIXED_ID,
          bounceType: 'Permanent',
          recipients: [expect.objectContaining({ email_address: 'gone@outlook.example', status: '5.1.10' })],
        },
      },
    ]);
    expect(Object.keys((calls[0]!.input as { recipients: object[] }).recipients[0]!).sort()).toEqual([
      'diagnostic_code',
      'email_address',
      'status',
    ]);
  });

  it('a report proving only the email (its shared header token) speaks for nobody when the email had several recipients', async () => {
    const { service, calls } = setup({ id: MIXED_ID, status: 'delivered', recipients: RECIPIENTS });
    expect(await service.receive(fixture('dsn-mixed.eml'))).toBe('ignored');
    expect(calls).toEqual([]);
  });

  it("a co-recipient cannot bounce or complain in another's name (issue 22, item 2)", async () => {
    // b@ received a copy (the 2nd recipient) and mails a well-formed DSN and an ARF naming a@ to its own return path.
    const { service, calls } = setup({
      id: POSTFIX_ID,
      status: 'delivered',
      recipients: ['victim@example.net', 'mallory@example.net'],
    });
    const dsn = fixture('dsn-postfix.eml')
      .toString()
      .replace(/nobody@example\.net/g, 'victim@example.net');
    // At her own return path the DSN speaks for her copy only, and it names nobody of that copy: nothing.
    expect(
      await service.receive(Buffer.from(dsn), { rcptTo: [makeReturnPath(tokens, POSTFIX_ID, 1, 'rp.example.com')] }),
    ).toBe('ignored');
    expect(calls).toEqual([]);
    // With only the shared header token (the copy's Return-Path left out), it names nobody.
    expect(await service.receive(Buffer.from(dsn))).toBe('ignored');
    // A forged return path of the victim's copy is refused at RCPT TO (mallory never saw it), and proves nothing.
    const forged = `b-${POSTFIX_ID}.0-${'a'.repeat(24)}@rp.example.com`;
    expect(service.acceptsRecipient(forged)).toBe(false);
    expect(await service.receive(Buffer.from(dsn), { rcptTo: [forged] })).toBe('ignored');
    expect(calls).toEqual([]);
    // The victim's own DSN, at the victim's return path, is the victim's bounce.
    expect(
      await service.receive(Buffer.from(dsn), { rcptTo: [makeReturnPath(tokens, POSTFIX_ID, 0, 'rp.example.com')] }),
    ).toBe('recorded');
    expect(calls).toEqual([
      {
        kind: 'bounce',
        input: expect.objectContaining({
          recipients: [expect.objectContaining({ email_address: 'victim@example.net' })],
        }),
      },
    ]);
  });

  it('takes a forwarded recipient by its Original-Recipient', async () => {
    const raw = fixture('dsn-postfix.eml')
      .toString()
      .replace(
        'Final-Recipient: rfc822; nobody@example.net',
        'Final-Recipient: rfc822; elsewhere@forward.example\nOriginal-Recipient: rfc822; nobody@example.net',
      );
    const { service, calls } = setup({ id: POSTFIX_ID, status: 'delivered', recipients: ['nobody@example.net'] });
    expect(await service.receive(Buffer.from(raw))).toBe('recorded');
    expect(calls).toEqual([
      {
        kind: 'bounce',
        input: expect.objectContaining({
          recipients: [expect.objectContaining({ email_address: 'nobody@example.net' })],
        }),
      },
    ]);
  });

  it("a complaint is its copy's recipient's, and counts for health only from a trusted feedback loop", async () => {
    const one = setup({ id: YAHOO_ID, status: 'delivered', recipients: ['jane.doe@yahoo.com'] });
    await one.service.receive(fixture('arf-yahoo.eml'), { rcptTo: [], remoteAddress: one.trustedFrom });
    await one.service.receive(fixture('arf-yahoo.eml'), { rcptTo: [], remoteAddress: '198.51.100.1' });
    expect(one.calls).toEqual([
      {
        kind: 'complaint',
        input: { emailId: YAHOO_ID, recipients: ['jane.doe@yahoo.com'], feedbackType: 'abuse', countsForHealth: true },
      },
      {
        kind: 'complaint',
        input: { emailId: YAHOO_ID, recipients: ['jane.doe@yahoo.com'], feedbackType: 'abuse', countsForHealth: false },
      },
    ]);

    const forwarded = setup({ id: YAHOO_ID, status: 'delivered', recipients: ['alias@example.org'] });
    await forwarded.service.receive(fixture('arf-yahoo.eml'));
    expect(forwarded.calls).toEqual([
      {
        kind: 'complaint',
        input: expect.objectContaining({ recipients: ['alias@example.org'], countsForHealth: false }),
      },
    ]);

    const several = setup({ id: HEADERS_ONLY_ID, status: 'delivered', recipients: ['a@example.net', 'b@example.net'] });
    // It quotes no token at all: no proof.
    expect(await several.service.receive(fixture('arf-headers-only.eml'))).toBe('refused');
    await several.service.receive(fixture('arf-headers-only.eml'), {
      rcptTo: [makeReturnPath(tokens, HEADERS_ONLY_ID, 1, 'rp.example.com')],
    });
    expect(several.calls).toEqual([
      {
        kind: 'complaint',
        input: expect.objectContaining({
          emailId: HEADERS_ONLY_ID,
          recipients: ['b@example.net'],
          feedbackType: 'fraud',
        }),
      },
    ]);
  });

  it("binds a feedback loop's report by the Return-Path it quotes of the copy", async () => {
    const { service, calls } = setup({
      id: HEADERS_ONLY_ID,
      status: 'delivered',
      recipients: ['a@example.net', 'b@example.net'],
    });
    const raw = fixture('arf-headers-only.eml').toString();
    const quoted = raw.replace(
      /^(Subject: Verify your account)$/m,
      `Return-Path: <${makeReturnPath(tokens, HEADERS_ONLY_ID, 0, 'rp.example.com')}>\n$1`,
    );
    expect(quoted).not.toBe(raw);
    expect(await service.receive(Buffer.from(quoted))).toBe('recorded');
    expect(calls).toEqual([{ kind: 'complaint', input: expect.objectContaining({ recipients: ['a@example.net'] }) }]);
    // Two proofs naming different copies contradict each other.
    expect(
      await service.receive(Buffer.from(quoted), {
        rcptTo: [makeReturnPath(tokens, HEADERS_ONLY_ID, 1, 'rp.example.com')],
      }),
    ).toBe('refused');
  });

  it('asks to retry while the delivery is not recorded, and ignores what it cannot use', async () => {
    await expect(
      setup({ id: POSTFIX_ID, status: 'pending', recipients: ['nobody@example.net'] }).service.receive(
        fixture('dsn-postfix.eml'),
      ),
    ).rejects.toThrow(/try again later/);
    const { service, calls } = setup();
    expect(await service.receive(fixture('dsn-postfix.eml'))).toBe('unknown-email');
    // A delay warning is no report: at the return path it is ignored; with only a quoted token, refused.
    expect(
      await service.receive(fixture('dsn-delayed.eml'), {
        rcptTo: [makeReturnPath(tokens, 'em_01jbq7m3k2x9f5v8r4t6w0y2zg', 0, 'rp.example.com')],
      }),
    ).toBe('ignored');
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
      [
        'a token of another key',
        postfix.replace(token, createReportTokens('someone-elses-secret-key').sign(POSTFIX_ID)),
        [],
      ],
      ['a token of another email', postfix.replace(token, tokens.sign(YAHOO_ID)), []],
      ['a tampered token', postfix.replace(token, `${token.slice(0, -2)}aa`), []],
      [
        'a valid token, but a forged quoted one',
        postfix.replace(token, `${token.slice(0, -2)}aa`),
        [makeReturnPath(tokens, POSTFIX_ID, 0, 'rp.example.com')],
      ],
      [
        'a return path of another email',
        postfix.replace(/^X-Mail-Report-Token: .*\n/m, ''),
        [makeReturnPath(tokens, YAHOO_ID, 0, 'rp.example.com')],
      ],
      [
        'a return path and a quoted token of different emails',
        postfix,
        [makeReturnPath(tokens, YAHOO_ID, 0, 'rp.example.com')],
      ],
      [
        "a valid token quoted with another email's Message-ID",
        postfix.replace(`<${POSTFIX_ID}@example.com>`, `<${YAHOO_ID}@example.com>`),
        [],
      ],
      ['mail that is no report', fixture('autoreply.eml').toString(), []],
      ['junk', 'not a message\r\n\r\n\0', []],
    ];
    it.each(cases)('%s', async (_name, raw, rcptTo) => {
      const { service, calls } = setup(email, {
        id: YAHOO_ID,
        status: 'delivered',
        recipients: ['jane.doe@yahoo.com'],
      });
      expect(await service.receive(Buffer.from(raw), { rcptTo })).toBe('refused');
      expect(calls).toEqual([]);
    });
  });

  it("takes a report mailed to the email's return path even without the original's headers", async () => {
    const raw = fixture('dsn-postfix.eml').toString();
    const bare = raw
      .slice(0, raw.indexOf('Content-Description: Undelivered Message'))
      .replace(/\n--[^\n]*\n$/, '\n--3F1B2C0A1D.1741083611/mx.example.net--\n');
    const { service, calls } = setup({ id: POSTFIX_ID, status: 'delivered', recipients: ['nobody@example.net'] });
    expect(await service.receive(Buffer.from(bare))).toBe('refused');
    expect(
      await service.receive(Buffer.from(bare), {
        rcptTo: [makeReturnPath(tokens, POSTFIX_ID, 0, 'rp.example.com').toUpperCase()],
      }),
    ).toBe('recorded');
    expect(calls).toHaveLength(1);
  });

  it('takes return paths with valid tokens only at RCPT TO, and any other address', () => {
    const { service } = setup();
    expect(service.acceptsRecipient(makeReturnPath(tokens, POSTFIX_ID, 0, 'rp.example.com'))).toBe(true);
    expect(service.acceptsRecipient(`b-${POSTFIX_ID}-aaaaaaaaaaaaaaaaaaaaaaaa@rp.example.com`)).toBe(false);
    expect(service.acceptsRecipient('fbl@example.com')).toBe(true);
  });
});
