import { describe, expect, it } from 'vitest';
import type { EmailRow } from '../../src/domain/entities/emails.js';
import { bounceTypeOf, refusalClass, type RefusalClass } from '../../src/domain/bounce-class.js';
import { attemptOutcome, transientBounceOutcome, type Attempt } from '../../src/delivery/outcome/delivery-outcome.js';
import { parseFeedbackReport } from '../../src/inbound/feedback-report.js';
import { classifySmtpError } from '../../src/delivery/transport/smtp-outcome.js';
import { buildDsn } from '../helpers/report-builders.js';

const email = {
  id: 'em_1',
  accountId: 'acc_1',
  to: [{ name: '', address: 'rcpt@example.net' }],
  cc: [],
  bcc: [],
  createdAt: new Date('2026-11-21T10:00:00.000Z'),
  sentAt: null,
  remainingRecipients: null,
} as unknown as EmailRow;
const at = new Date('2026-11-21T10:00:01.000Z');
const attempt: Attempt = {
  handedAt: at,
  answeredAt: at,
  messageId: '<m>',
  accepted: [],
  refused: [],
  deferred: [],
  suppressed: [],
};

/**
 * Replies as the big providers document them, and RFC 3463's codes, with what each must become:
 * `retried` (deferred, then a Transient bounce when the budget is spent), `Permanent` (a bounce that
 * suppresses the address) or `Transient` (bounced at once, the address left alone).
 */
type Verdict = 'retried' | 'Permanent' | 'Transient';
const REPLIES: [string, number, string, Verdict][] = [
  // Mailbox full / over quota: the owner can make room.
  [
    'Gmail mailbox full',
    552,
    "552-5.2.2 The recipient's inbox is out of storage space. Please direct the recipient to https://support.google.com/mail/?p=OverQuotaPerm",
    'retried',
  ],
  [
    'Microsoft mailbox full',
    554,
    '554 5.2.2 mailbox full; STOREDRV.Deliver.Exception:QuotaExceededException',
    'retried',
  ],
  [
    'Yahoo over quota (no enhanced code)',
    554,
    '554 delivery error: dd Sorry, your message to x@yahoo.com cannot be delivered. This account is over quota.',
    'retried',
  ],
  [
    'RFC 5321 552 wording, no enhanced code',
    552,
    '552 Requested mail action aborted: exceeded storage allocation',
    'retried',
  ],
  ['mail system full', 552, '552 5.3.1 Mail system full', 'retried'],
  ['too many recipients (RFC 5321 4.5.3.1.10)', 552, '552 5.5.3 Too many recipients', 'retried'],
  ['mail system congestion', 550, '550 5.4.5 Mail system congestion', 'retried'],
  ['already temporary', 452, '452 4.2.2 Mailbox full', 'retried'],
  // The address is gone: suppress it.
  ['Gmail no such user', 550, '550-5.1.1 The email account that you tried to reach does not exist.', 'Permanent'],
  ['Gmail disabled account', 550, '550 5.2.1 The email account that you tried to reach is disabled.', 'Permanent'],
  [
    'Microsoft recipient not found',
    550,
    '550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup',
    'Permanent',
  ],
  [
    'Microsoft directory-based edge blocking (unknown user)',
    550,
    '550 5.4.1 Recipient address rejected: Access denied. AS(201806281)',
    'Permanent',
  ],
  [
    'Yahoo no such user (no enhanced code)',
    554,
    "554 delivery error: dd This user doesn't have a yahoo.com account (x@yahoo.com) [0]",
    'Permanent',
  ],
  ['bad domain', 550, '550 5.1.2 Host unknown', 'Permanent'],
  ['bad address syntax', 553, '553 5.1.3 Bad recipient address syntax', 'Permanent'],
  ['moved, no forwarding', 550, '550 5.1.6 Mailbox has moved', 'Permanent'],
  ['null MX', 556, '556 5.1.10 does not accept mail', 'Permanent'],
  ['unable to route', 550, '550 5.4.4 Unable to route', 'Permanent'],
  ['mailbox owner has changed (RFC 7293)', 550, '550 5.7.17 Mailbox owner has changed', 'Permanent'],
  ['undefined 5.0.0', 550, '550 5.0.0 No such user here', 'Permanent'],
  ['no enhanced code', 550, '550 Requested action not taken: mailbox unavailable', 'Permanent'],
  // The message or its sender is refused, not the address.
  [
    'Gmail spam block',
    550,
    '550-5.7.1 Our system has detected that this message is likely unsolicited mail.',
    'Transient',
  ],
  [
    'Gmail unauthenticated (DMARC)',
    550,
    '550-5.7.26 This mail has been blocked because the sender is unauthenticated.',
    'Transient',
  ],
  ['Gmail PTR', 550, '550-5.7.25 The IP address sending this message does not have a PTR record setup', 'Transient'],
  ['Gmail message too large', 552, "552-5.3.4 Your message exceeded Google's message size limits.", 'Transient'],
  [
    'Gmail content blocked',
    552,
    '552-5.7.0 This message was blocked because its content presents a potential security issue.',
    'Transient',
  ],
  ['Microsoft banned sending IP', 550, '550 5.7.606 Access denied, banned sending IP [203.0.113.1]', 'Transient'],
  [
    'Microsoft DMARC reject',
    550,
    '550 5.7.509 Access denied, sending domain does not pass DMARC verification',
    'Transient',
  ],
  [
    'Microsoft delivery not authorized',
    550,
    '550 5.7.1 RESOLVER.RST.AuthRequired; authentication required',
    'Transient',
  ],
  ['Microsoft bad outbound sender', 550, '550 5.1.8 Access denied, bad outbound sender', 'Transient'],
  [
    'Microsoft recipient size limit',
    550,
    '550 5.2.3 RESOLVER.RST.RecipSizeLimit; message too large for this recipient',
    'Transient',
  ],
  [
    'Yahoo IP on a blocklist',
    553,
    "553 5.7.1 [BL21] Connections will not be accepted from 203.0.113.1, because the ip is in Spamhaus's list",
    'Transient',
  ],
  ['relay access denied', 554, '554 5.7.1 <x@example.net>: Relay access denied', 'Transient'],
  ['content conversion', 554, '554 5.6.0 Message content rejected', 'Transient'],
  ['protocol syntax', 501, '501 5.5.2 Syntax error', 'Transient'],
  ['delivery time expired at a relay', 554, '554 5.4.7 Delivery time expired', 'Transient'],
];

/** What the delivery path makes of one refused or deferred recipient with `code` and `reply`. */
function verdictOf(code: number, reply: string) {
  const failure = classifySmtpError(Object.assign(new Error(reply), { responseCode: code, response: reply }));
  const recipient = { address: 'rcpt@example.net', failure };
  const outcome =
    failure.kind === 'soft'
      ? attemptOutcome(email, { ...attempt, deferred: [recipient] })
      : attemptOutcome(email, { ...attempt, refused: [recipient] });
  return { failure, outcome };
}

describe('bounce classes as receivers mean them', () => {
  it.each(REPLIES)('%s: %s %s', (_what, code, reply, verdict) => {
    const { failure, outcome } = verdictOf(code, reply);
    if (verdict === 'retried') {
      expect(failure.kind).toBe('soft');
      expect(outcome).toMatchObject({ status: 'pending', remaining: ['rcpt@example.net'], suppress: [] });
      expect(outcome.events.filter((e) => e.type === 'bounce')).toEqual([]);
      // The budget spent: a Transient bounce with the server's own status (4.4.7, delivery time expired, when
      // it gave none), the address not suppressed.
      const spent = transientBounceOutcome(
        { ...email, remainingRecipients: ['rcpt@example.net'] },
        at,
        outcome.error ?? '',
      );
      expect(spent).toMatchObject({ status: 'bounced', suppress: [] });
      const status = /\b[45]\.\d{1,3}\.\d{1,3}\b/.test(reply) ? failure.status : '4.4.7';
      expect(spent.events.at(-1)!.data).toEqual({
        bounce_type: 'Transient',
        bounce_subtype: 'General',
        bounced_recipients: [{ email_address: 'rcpt@example.net', status, diagnostic_code: reply }],
      });
      return;
    }
    expect(failure.kind).toBe('hard');
    expect(outcome.status).toBe('bounced');
    expect(outcome.events.map((e) => e.type)).toEqual(['send', 'bounce']);
    expect(outcome.events[1]!.data).toEqual({
      bounce_type: verdict,
      bounce_subtype: 'General',
      bounced_recipients: [{ email_address: 'rcpt@example.net', status: failure.status, diagnostic_code: reply }],
    });
    expect(outcome.suppress.map((s) => s.address)).toEqual(verdict === 'Permanent' ? ['rcpt@example.net'] : []);
  });

  it('one attempt with a dead address and a policy block: a Permanent bounce (suppressed) and a Transient one (not)', () => {
    const refusal = (address: string, reply: string) => ({
      address,
      failure: classifySmtpError({ responseCode: 550, response: reply }),
    });
    const o = attemptOutcome(email, {
      ...attempt,
      refused: [refusal('gone@example.net', '550 5.1.1 no such user'), refusal('fine@example.org', '550 5.7.1 spam')],
    });
    expect(o.events.filter((e) => e.type === 'bounce').map((e) => e.data)).toEqual([
      {
        bounce_type: 'Permanent',
        bounce_subtype: 'General',
        bounced_recipients: [expect.objectContaining({ email_address: 'gone@example.net', status: '5.1.1' })],
      },
      {
        bounce_type: 'Transient',
        bounce_subtype: 'General',
        bounced_recipients: [expect.objectContaining({ email_address: 'fine@example.org', status: '5.7.1' })],
      },
    ]);
    expect(o.suppress.map((s) => s.address)).toEqual(['gone@example.net']);
  });

  it.each([
    ['5.1.1', 'Permanent'],
    ['5.2.1', 'Permanent'],
    ['5.0.0', 'Permanent'],
    ['5.1.10', 'Permanent'],
    ['5.2.2', 'Transient'],
    ['5.7.1', 'Transient'],
    ['5.3.4', 'Transient'],
    ['4.2.2', 'Transient'],
    ['4.4.7', 'Transient'],
  ])('a DSN that failed with %s is a %s bounce', async (status, type) => {
    const report = await parseFeedbackReport(
      buildDsn({ recipient: 'rcpt@example.net', status, diagnostic: `550 ${status} refused` }),
    );
    expect(report?.kind === 'bounce' && report.recipients[0]!.bounceType).toBe(type);
  });

  it('a DSN without a specific code is judged by its words: over quota is Transient', async () => {
    const report = await parseFeedbackReport(
      buildDsn({
        recipient: 'rcpt@example.net',
        status: '5.0.0',
        diagnostic: '554 delivery error: dd This account is over quota',
      }),
    );
    expect(report?.kind === 'bounce' && report.recipients[0]!.bounceType).toBe('Transient');
  });
});

describe('refusalClass (the table)', () => {
  const table: [string, RefusalClass][] = [
    ['5.1.0', 'recipient'],
    ['5.1.1', 'recipient'],
    ['5.1.2', 'recipient'],
    ['5.1.3', 'recipient'],
    ['5.1.4', 'recipient'],
    ['5.1.6', 'recipient'],
    ['5.1.7', 'message'],
    ['5.1.8', 'message'],
    ['5.1.10', 'recipient'],
    ['5.2.0', 'recipient'],
    ['5.2.1', 'recipient'],
    ['5.2.2', 'retry'],
    ['5.2.3', 'message'],
    ['5.2.4', 'recipient'],
    ['5.3.0', 'recipient'],
    ['5.3.1', 'retry'],
    ['5.3.4', 'message'],
    ['5.4.1', 'recipient'],
    ['5.4.3', 'retry'],
    ['5.4.4', 'recipient'],
    ['5.4.5', 'retry'],
    ['5.4.7', 'message'],
    ['5.5.1', 'message'],
    ['5.5.3', 'retry'],
    ['5.6.0', 'message'],
    ['5.6.7', 'message'],
    ['5.7.0', 'message'],
    ['5.7.1', 'message'],
    ['5.7.26', 'message'],
    ['5.7.606', 'message'],
    ['5.7.17', 'recipient'],
    ['5.7.18', 'recipient'],
    ['5.9.9', 'recipient'],
    ['', 'recipient'],
    ['not a code', 'recipient'],
  ];
  it.each(table)('%j is %s', (status, cls) => {
    expect(refusalClass(status)).toBe(cls);
  });

  it('reads the words only when the code says nothing specific', () => {
    expect(refusalClass('5.0.0', '552 Mailbox full')).toBe('retry');
    expect(refusalClass('', 'user is over quota')).toBe('retry');
    expect(refusalClass('5.1.1', '550 5.1.1 unknown user (mailbox full of spam traps)')).toBe('recipient');
    expect(bounceTypeOf('4.1.1')).toBe('Transient');
  });
});
