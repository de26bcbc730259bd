import { describe, expect, it } from 'vitest';
import type { EmailRow } from '../../src/db/repos/emails-repo.js';
import { deliveredOutcome, hardBounceOutcome, recipientsOf, rejectedOutcome, suppressedOutcome, transientBounceOutcome } from '../../src/mail/delivery-outcome.js';
import { classifySmtpError } from '../../src/mail/smtp-outcome.js';

const email = {
  id: 'em_1', accountId: 'acc_1', to: [{ name: 'Ann', address: 'Ann@example.net' }], cc: [{ name: '', address: 'bob@example.net' }],
  bcc: [{ name: '', address: 'ann@example.net' }],
  createdAt: new Date('2026-11-21T10:00:00.000Z'),
} as EmailRow;
const at = new Date('2026-11-21T10:00:01.250Z');

describe('delivery outcomes', () => {
  it('recipients are bare, lower case and unique', () => {
    expect(recipientsOf(email)).toEqual(['ann@example.net', 'bob@example.net']);
  });

  it('accepted: send then delivery with the processing time; refused recipients bounce and are suppressed', () => {
    const refused = [{ address: 'Bob@example.net', failure: classifySmtpError({ responseCode: 550, response: '550 5.1.1 no such user' }) }];
    const o = deliveredOutcome(email, { handedAt: at, acceptedAt: at, messageId: '<m>', response: '250 ok', accepted: ['Ann@Example.net'], refused, suppressed: ['x@example.net'] });
    expect(o.status).toBe('delivered');
    expect(o.events.map((e) => e.type)).toEqual(['send', 'delivery', 'bounce', 'bounce']);
    expect(o.events[1]!.data).toEqual({ processing_time_millis: 1250, recipients: ['ann@example.net'], smtp_response: '250 ok' });
    expect(o.events[2]!.data).toEqual({ bounce_type: 'Permanent', bounce_subtype: 'General', bounced_recipients: [{ email_address: 'bob@example.net', status: '5.1.1', diagnostic_code: '550 5.1.1 no such user' }] });
    expect(o.events[3]!.data).toMatchObject({ bounce_subtype: 'Suppressed', bounced_recipients: [expect.objectContaining({ email_address: 'x@example.net' })] });
    expect(o.suppress.map((s) => [s.address, s.reason])).toEqual([['bob@example.net', 'bounce']]);
  });

  it('a permanent refusal bounces every recipient sent to with the server\'s reply', () => {
    const failure = classifySmtpError({ responseCode: 554, response: '554 5.7.1 rejected as spam' });
    const o = hardBounceOutcome(email, at, failure, [], ['ann@example.net', 'bob@example.net']);
    expect(o.status).toBe('bounced');
    expect(o.events.map((e) => e.type)).toEqual(['send', 'bounce']);
    expect(o.events[1]!.data).toMatchObject({ bounce_type: 'Permanent', bounced_recipients: [
      { email_address: 'ann@example.net', status: '5.7.1', diagnostic_code: '554 5.7.1 rejected as spam' },
      { email_address: 'bob@example.net', status: '5.7.1', diagnostic_code: '554 5.7.1 rejected as spam' },
    ] });
    expect(o.suppress).toHaveLength(2);
  });

  it('a spent retry budget is a Transient bounce with the last reply\'s status (4.4.7 without one), nothing suppressed', () => {
    expect(transientBounceOutcome(email, at, '452 4.2.2 mailbox full').events[1]!.data).toMatchObject({ bounce_type: 'Transient', bounced_recipients: [expect.objectContaining({ status: '4.2.2' }), expect.anything()] });
    expect(transientBounceOutcome(email, at, 'ECONNREFUSED').events[1]!.data).toMatchObject({ bounced_recipients: [expect.objectContaining({ status: '4.4.7', diagnostic_code: 'ECONNREFUSED' }), expect.anything()] });
    expect(transientBounceOutcome(email, at, '').suppress).toEqual([]);
  });

  it('suppressed and rejected emails never count as handed to a server (no send event)', () => {
    expect(suppressedOutcome(email, at, ['ann@example.net']).events.map((e) => e.type)).toEqual(['bounce']);
    expect(rejectedOutcome(email, at, 'account paused').events).toEqual([expect.objectContaining({ type: 'reject', data: { reason: 'account paused' } })]);
  });
});
