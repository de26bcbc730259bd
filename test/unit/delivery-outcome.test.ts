import { describe, expect, it } from 'vitest';
import type { EmailRow } from '../../src/domain/entities/emails.js';
import {
  attemptOutcome,
  pendingRecipientsOf,
  recipientsOf,
  rejectedOutcome,
  suppressedOutcome,
  transientBounceOutcome,
  type Attempt,
} from '../../src/delivery/outcome/delivery-outcome.js';
import { classifySmtpError } from '../../src/delivery/transport/smtp-outcome.js';

const email = {
  id: 'em_1',
  accountId: 'acc_1',
  to: [{ name: 'Ann', address: 'Ann@example.net' }],
  cc: [{ name: '', address: 'bob@example.net' }],
  bcc: [{ name: '', address: 'ann@example.net' }],
  createdAt: new Date('2026-11-21T10:00:00.000Z'),
  sentAt: null,
  remainingRecipients: null,
} as unknown as EmailRow;
const at = new Date('2026-11-21T10:00:01.250Z');
const answered: Attempt = {
  handedAt: at,
  answeredAt: at,
  messageId: '<m>',
  accepted: [],
  refused: [],
  deferred: [],
  suppressed: [],
};
const later = (code: number, response: string) => classifySmtpError({ responseCode: code, response });

describe('delivery outcomes', () => {
  it('recipients are bare, lower case and unique', () => {
    expect(recipientsOf(email)).toEqual(['ann@example.net', 'bob@example.net']);
  });

  it('accepted: send then delivery with the processing time; refused recipients bounce and are suppressed', () => {
    const refused = [
      {
        address: 'Bob@example.net',
        failure: classifySmtpError({ responseCode: 550, response: '550 5.1.1 no such user' }),
      },
    ];
    const o = attemptOutcome(email, {
      ...answered,
      accepted: [{ address: 'Ann@Example.net', response: '250 ok' }],
      refused,
      suppressed: ['x@example.net'],
    });
    expect(o.status).toBe('delivered');
    expect(o.events.map((e) => e.type)).toEqual(['send', 'delivery', 'bounce', 'bounce']);
    expect(o.events[1]!.data).toEqual({
      processing_time_millis: 1250,
      recipients: ['ann@example.net'],
      smtp_response: '250 ok',
    });
    expect(o.events[2]!.data).toEqual({
      bounce_type: 'Permanent',
      bounce_subtype: 'General',
      bounced_recipients: [
        { email_address: 'bob@example.net', status: '5.1.1', diagnostic_code: '550 5.1.1 no such user' },
      ],
    });
    expect(o.events[3]!.data).toMatchObject({
      bounce_subtype: 'Suppressed',
      bounced_recipients: [expect.objectContaining({ email_address: 'x@example.net' })],
    });
    expect(o.suppress.map((s) => [s.address, s.reason])).toEqual([['bob@example.net', 'bounce']]);
  });

  it('direct delivery: one delivery event per reply and TLS, with tls_version and tls_verified', () => {
    const tls13 = { version: 'TLSv1.3', verified: true };
    const o = attemptOutcome(email, {
      ...answered,
      accepted: [
        { address: 'ann@example.net', response: '250 ok', mx: 'mx1.example.net', tls: tls13 },
        {
          address: 'bob@example.net',
          response: '250 ok',
          mx: 'mx2.example.net',
          tls: { version: null, verified: false },
        },
        { address: 'cy@example.net', response: '250 ok', mx: 'mx1.example.net', tls: tls13 },
      ],
    });
    expect(o.events.map((e) => e.type)).toEqual(['send', 'delivery', 'delivery']);
    expect(o.events.slice(1).map((e) => e.data)).toEqual([
      {
        processing_time_millis: 1250,
        recipients: ['ann@example.net', 'cy@example.net'],
        smtp_response: '250 ok',
        tls_version: 'TLSv1.3',
        tls_verified: true,
      },
      {
        processing_time_millis: 1250,
        recipients: ['bob@example.net'],
        smtp_response: '250 ok',
        tls_version: null,
        tls_verified: false,
      },
    ]);
  });

  it("a permanent refusal bounces every recipient sent to with the server's reply; a spam block is Transient and suppresses no one", () => {
    const failure = classifySmtpError({ responseCode: 554, response: '554 5.7.1 rejected as spam' });
    const o = attemptOutcome(email, {
      ...answered,
      refused: ['ann@example.net', 'bob@example.net'].map((address) => ({ address, failure })),
    });
    expect(o.status).toBe('bounced');
    expect(o.events.map((e) => e.type)).toEqual(['send', 'bounce']);
    expect(o.events[1]!.data).toMatchObject({
      bounce_type: 'Transient',
      bounced_recipients: [
        { email_address: 'ann@example.net', status: '5.7.1', diagnostic_code: '554 5.7.1 rejected as spam' },
        { email_address: 'bob@example.net', status: '5.7.1', diagnostic_code: '554 5.7.1 rejected as spam' },
      ],
    });
    // The message was refused, not the addresses (domain/bounce-class.ts; test/unit/bounce-class.test.ts).
    expect(o.suppress).toEqual([]);
  });

  it("a spent retry budget is a Transient bounce with the last reply's status (4.4.7 without one), nothing suppressed", () => {
    expect(transientBounceOutcome(email, at, '452 4.2.2 mailbox full').events[1]!.data).toMatchObject({
      bounce_type: 'Transient',
      bounced_recipients: [expect.objectContaining({ status: '4.2.2' }), expect.anything()],
    });
    expect(transientBounceOutcome(email, at, 'ECONNREFUSED').events[1]!.data).toMatchObject({
      bounced_recipients: [
        expect.objectContaining({ status: '4.4.7', diagnostic_code: 'ECONNREFUSED' }),
        expect.anything(),
      ],
    });
    expect(transientBounceOutcome(email, at, '').suppress).toEqual([]);
  });

  it('a spent retry budget after an attempt that died having handed some copies over: those are delivered, the rest bounce', () => {
    const withId = { ...email, headerMessageId: '<em_1@example.com>' } as EmailRow;
    const o = transientBounceOutcome(withId, at, '451 4.3.0 try later', [
      { address: 'ann@example.net', response: '250 ok ann' },
    ]);
    expect(o).toMatchObject({
      status: 'delivered',
      messageId: '<em_1@example.com>',
      response: '250 ok ann',
      sentAt: at,
    });
    expect(o.events.map((e) => e.type)).toEqual(['send', 'delivery', 'bounce']);
    expect(o.events[1]!.data).toMatchObject({ recipients: ['ann@example.net'], smtp_response: '250 ok ann' });
    expect(o.events[2]!.data).toMatchObject({
      bounce_type: 'Transient',
      bounced_recipients: [expect.objectContaining({ email_address: 'bob@example.net', status: '4.3.0' })],
    });
    // Every copy handed over: nothing left to bounce.
    const all = transientBounceOutcome(withId, at, '', [
      { address: 'Ann@example.net', response: '250 a' },
      { address: 'bob@example.net', response: '250 b' },
    ]);
    expect(all.events.map((e) => e.type)).toEqual(['send', 'delivery', 'delivery']);
    expect(all.status).toBe('delivered');
  });

  it('suppressed and rejected emails never count as handed to a server (no send event)', () => {
    expect(suppressedOutcome(email, at, ['ann@example.net']).events.map((e) => e.type)).toEqual(['bounce']);
    expect(rejectedOutcome(email, at, 'account paused').events).toEqual([
      expect.objectContaining({ type: 'reject', data: { reason: 'account paused' } }),
    ]);
  });

  it("one delivery event per server reply: in direct mode each domain's MX answers for its own recipients", () => {
    const o = attemptOutcome(email, {
      ...answered,
      accepted: [
        { address: 'ann@example.net', response: '250 mx1 ok', mx: 'mx1' },
        { address: 'bob@example.org', response: '250 mx2 ok', mx: 'mx2' },
      ],
    });
    expect(o.events.filter((e) => e.type === 'delivery').map((e) => e.data)).toEqual([
      expect.objectContaining({ recipients: ['ann@example.net'], smtp_response: '250 mx1 ok' }),
      expect.objectContaining({ recipients: ['bob@example.org'], smtp_response: '250 mx2 ok' }),
    ]);
  });

  it('deferred recipients keep the email pending with just them left; the next attempt records no second send', () => {
    const first = attemptOutcome(email, {
      ...answered,
      accepted: [{ address: 'ann@example.net', response: '250 ok' }],
      deferred: [{ address: 'Bob@example.net', failure: later(451, '451 4.7.1 greylisted') }],
    });
    expect(first).toMatchObject({
      status: 'pending',
      remaining: ['bob@example.net'],
      error: '451 4.7.1 greylisted',
      sentAt: at,
    });
    expect(first.events.map((e) => e.type)).toEqual(['send', 'delivery']);
    const after = { ...email, remainingRecipients: ['bob@example.net'], sentAt: at } as EmailRow;
    expect(pendingRecipientsOf(after)).toEqual(['bob@example.net']);
    const second = attemptOutcome(after, {
      ...answered,
      accepted: [{ address: 'bob@example.net', response: '250 later' }],
    });
    expect(second.status).toBe('delivered');
    expect(second.events.map((e) => e.type)).toEqual(['delivery']);
    // Refused at the end, or expired: still delivered (to ann), with bob bounced, and no second send.
    const refusedLater = attemptOutcome(after, {
      ...answered,
      refused: [{ address: 'bob@example.net', failure: later(550, '550 5.1.1 gone') }],
    });
    expect(refusedLater.status).toBe('delivered');
    expect(refusedLater.events.map((e) => e.type)).toEqual(['bounce']);
    const expired = transientBounceOutcome(after, at, '451 4.7.1 greylisted');
    expect(expired.status).toBe('delivered');
    expect(expired.events.map((e) => e.type)).toEqual(['bounce']);
    expect(expired.events[0]!.data).toMatchObject({
      bounce_type: 'Transient',
      bounced_recipients: [{ email_address: 'bob@example.net', status: '4.7.1' }],
    });
  });

  it('refused for some and deferred for the rest: pending, never delivered, the refused bounced at once', () => {
    const o = attemptOutcome(email, {
      ...answered,
      refused: [{ address: 'ann@example.net', failure: later(550, '550 5.1.1 no') }],
      deferred: [{ address: 'bob@example.net', failure: later(421, '421 busy') }],
    });
    expect(o).toMatchObject({ status: 'pending', remaining: ['bob@example.net'] });
    expect(o.sentAt).toBeUndefined();
    expect(o.events.map((e) => e.type)).toEqual(['send', 'bounce']);
    const after = { ...email, remainingRecipients: ['bob@example.net'] } as EmailRow;
    expect(transientBounceOutcome(after, at, '421 busy').status).toBe('bounced');
  });
});
