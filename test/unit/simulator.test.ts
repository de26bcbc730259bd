import { describe, expect, it } from 'vitest';
import { parseFeedbackReport } from '../../src/inbound/feedback-report.js';
import { simulatedOutcome, simulatedRefusal, simulatedReport } from '../../src/local/simulator.js';

const original = Buffer.from(
  [
    'From: Sender <sender@example.com>',
    'To: complaint+signup@simulator.mailer.test',
    'Subject: Hello',
    'Message-ID: <em_01jbq7m3k2x9f5v8r4t6w0y2zc@example.com>',
    'X-Mail-Email-Id: em_01jbq7m3k2x9f5v8r4t6w0y2zc',
    'Content-Type: text/plain',
    '',
    'Hello there',
    '',
  ].join('\r\n'),
);

describe('the mailbox simulator', () => {
  it('maps addresses to outcomes, labels and case included', () => {
    expect(simulatedOutcome('success@simulator.mailer.test')).toBe('success');
    expect(simulatedOutcome('Bounce@Simulator.Mailer.Test')).toBe('bounce');
    expect(simulatedOutcome('complaint+signup@simulator.mailer.test')).toBe('complaint');
    expect(simulatedOutcome('asyncbounce+1@simulator.mailer.test')).toBe('asyncbounce');
    expect(simulatedOutcome('someone@simulator.mailer.test')).toBeUndefined();
    expect(simulatedOutcome('bounce@example.com')).toBeUndefined();
  });

  it('refuses bounce@ as a server refuses an unknown mailbox', () => {
    const err = simulatedRefusal('bounce@simulator.mailer.test');
    expect(err.responseCode).toBe(550);
    expect(err.message).toBe('5.1.1 <bounce@simulator.mailer.test>: Recipient address rejected: simulated hard bounce');
  });

  it('builds an ARF report the report parser reads as a complaint about the message', async () => {
    const raw = simulatedReport('complaint', original, {
      mailFrom: 'sender@example.com',
      recipient: 'complaint+signup@simulator.mailer.test',
    });
    expect(raw.toString()).toMatch(/^Content-Type: multipart\/report; report-type=feedback-report; boundary=/m);
    expect(raw.toString()).not.toMatch(/[^\r]\n/);
    expect(await parseFeedbackReport(raw)).toMatchObject({
      kind: 'complaint',
      feedbackType: 'abuse',
      recipients: ['complaint+signup@simulator.mailer.test'],
      originalMailFrom: 'sender@example.com',
      original: { emailId: 'em_01jbq7m3k2x9f5v8r4t6w0y2zc', messageId: '<em_01jbq7m3k2x9f5v8r4t6w0y2zc@example.com>' },
    });
  });

  it('builds a DSN the report parser reads as a permanent 5.1.1 bounce', async () => {
    const raw = simulatedReport('asyncbounce', original, {
      mailFrom: 'sender@example.com',
      recipient: 'asyncbounce@simulator.mailer.test',
    });
    expect(await parseFeedbackReport(raw)).toEqual({
      kind: 'bounce',
      recipients: [
        {
          email_address: 'asyncbounce@simulator.mailer.test',
          status: '5.1.1',
          diagnostic_code:
            '550 5.1.1 <asyncbounce@simulator.mailer.test>: Recipient address rejected: simulated asynchronous bounce',
          bounceType: 'Permanent',
        },
      ],
      original: { emailId: 'em_01jbq7m3k2x9f5v8r4t6w0y2zc', messageId: '<em_01jbq7m3k2x9f5v8r4t6w0y2zc@example.com>' },
    });
  });
});
