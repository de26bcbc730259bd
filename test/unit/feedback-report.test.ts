import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseFeedbackReport } from '../../src/inbound/feedback-report.js';

const fixture = (name: string) => fs.readFileSync(path.join(import.meta.dirname, '../fixtures/feedback', name));
/** The fixtures are kept with LF line ends; over SMTP every line ends in CRLF. */
const crlf = (raw: Buffer) => Buffer.from(raw.toString('utf8').replace(/\r?\n/g, '\r\n'));
/** What a report's quoted original names: our email id, the Message-ID built from it, and its report token. */
const quoted = (emailId: string, token: string) => ({
  emailId,
  messageId: `<${emailId}@example.com>`,
  reportToken: `${emailId}-${token}`,
});

describe('ARF abuse reports (RFC 5965) become complaints', () => {
  it('reads a Yahoo-style report with the original message attached', async () => {
    const report = await parseFeedbackReport(fixture('arf-yahoo.eml'));
    expect(report).toEqual({
      kind: 'complaint',
      feedbackType: 'abuse',
      recipients: ['jane.doe@yahoo.com'],
      originalMailFrom: 'sender@example.com',
      arrivalDate: new Date('2025-03-04T10:15:02Z'),
      original: quoted('em_01jbq7m3k2x9f5v8r4t6w0y2zc', 'fp2xovtzl3hlkifccxmto3eb'),
    });
    expect(await parseFeedbackReport(crlf(fixture('arf-yahoo.eml')))).toEqual(report);
  });

  it('reads a redacted report that quotes only the headers, with a folded Message-ID and no X-Mail-Email-Id', async () => {
    expect(await parseFeedbackReport(crlf(fixture('arf-headers-only.eml')))).toEqual({
      kind: 'complaint',
      feedbackType: 'fraud',
      recipients: [],
      arrivalDate: new Date('2025-03-05T07:41:10Z'),
      original: { messageId: '<em_01jbq7m3k2x9f5v8r4t6w0y2zf@example.com>' },
    });
  });

  it('ignores feedback that is no complaint (not-spam, auth-failure)', async () => {
    for (const type of ['not-spam', 'auth-failure']) {
      const raw = fixture('arf-yahoo.eml').toString().replace('Feedback-Type: abuse', `Feedback-Type: ${type}`);
      expect(await parseFeedbackReport(Buffer.from(raw)), type).toBeUndefined();
    }
  });
});

describe('delivery status notifications (RFC 3464) become bounces', () => {
  it('reads a Postfix bounce: status, unfolded diagnostic without its type, the original message', async () => {
    expect(await parseFeedbackReport(crlf(fixture('dsn-postfix.eml')))).toEqual({
      kind: 'bounce',
      recipients: [
        {
          email_address: 'nobody@example.net',
          status: '5.1.1',
          diagnostic_code:
            '550 5.1.1 <nobody@example.net>: Recipient address rejected: User unknown in virtual mailbox table',
          bounceType: 'Permanent',
        },
      ],
      // The quoted original's Return-Path (here no return path of ours: inbound-feedback-service judges it).
      original: {
        ...quoted('em_01jbq7m3k2x9f5v8r4t6w0y2zd', 'mti7yy6d6kio3ql4j4oztyij'),
        returnPath: 'sender@example.com',
      },
    });
  });

  it('reads a Gmail-style message/global-delivery-status with a UTF-8 recipient and message/global-headers', async () => {
    const report = await parseFeedbackReport(crlf(fixture('dsn-gmail-global.eml')));
    expect(report).toMatchObject({
      kind: 'bounce',
      // The domain in its ASCII form: the form the recipient was stored and suppressed in.
      recipients: [{ email_address: 'josé@xn--bcher-kva.example', status: '5.1.1', bounceType: 'Permanent' }],
      original: quoted('em_01jbq7m3k2x9f5v8r4t6w0y2ze', 'l2f4utcfq4cia2xhxtv7qgdo'),
    });
    expect(report?.kind === 'bounce' && report.recipients[0]!.diagnostic_code).toBe(
      "550-5.1.1 The email account that you tried to reach does not exist. Please try 550-5.1.1 double-checking the recipient's email address " +
        'for typos or 550-5.1.1 unnecessary spaces. For more information, go to 550 5.1.1  https://support.google.com/mail/?p=NoSuchUser a640c23a62f3a-abc123.2 - gsmtp',
    );
  });

  it('falls back to the X-Original-Message-ID of the report when no original headers are quoted', async () => {
    const raw = fixture('dsn-gmail-global.eml').toString();
    const withoutOriginal =
      raw.slice(0, raw.indexOf('Content-Type: message/global-headers')) + '\n--000000000000b1c2d3062f6e9a10--\n';
    const report = await parseFeedbackReport(Buffer.from(withoutOriginal));
    expect(report?.original).toEqual({ messageId: '<em_01jbq7m3k2x9f5v8r4t6w0y2ze@example.com>' });
  });

  it('keeps only failed recipients, each with its bounce type; the address in lower case', async () => {
    const report = await parseFeedbackReport(crlf(fixture('dsn-mixed.eml')));
    expect(report).toEqual({
      kind: 'bounce',
      recipients: [
        {
          email_address: 'full@outlook.example',
          status: '4.2.2',
          diagnostic_code: '452 4.2.2 Mailbox full (Quota exceeded)',
          bounceType: 'Transient',
        },
        {
          email_address: 'gone@outlook.example',
          status: '5.1.10',
          diagnostic_code: '550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup',
          bounceType: 'Permanent',
        },
      ],
      original: quoted('em_01jbq7m3k2x9f5v8r4t6w0y2zh', 't3ix64xyo7cm46zfzc2qorzv'),
    });
  });

  it('ignores a delay warning: delayed is not a bounce', async () => {
    expect(await parseFeedbackReport(crlf(fixture('dsn-delayed.eml')))).toBeUndefined();
  });

  it('takes the status from the diagnostic when the Status field is unusable, else 5.0.0', async () => {
    const raw = fixture('dsn-postfix.eml').toString();
    const noStatus = await parseFeedbackReport(Buffer.from(raw.replace('Status: 5.1.1', 'Status: unknown')));
    expect(noStatus?.kind === 'bounce' && noStatus.recipients[0]!.status).toBe('5.1.1');
    const nothing = await parseFeedbackReport(
      Buffer.from(
        raw
          .replace('Status: 5.1.1', 'Status: x')
          .replace(/Diagnostic-Code:[^]*?\n--/, 'Diagnostic-Code: x-unix; gone\n\n--'),
      ),
    );
    expect(nothing?.kind === 'bounce' && nothing.recipients[0]).toMatchObject({
      status: '5.0.0',
      diagnostic_code: 'gone',
      bounceType: 'Permanent',
    });
  });

  it('reads at most 100 recipients of one report', async () => {
    const blocks = Array.from(
      { length: 300 },
      (_, i) => `Final-Recipient: rfc822; r${i}@example.net\nAction: failed\nStatus: 5.1.1\n`,
    ).join('\n');
    const raw = fixture('dsn-postfix.eml')
      .toString()
      .replace(/Final-Recipient:[^]*?(?=\n--3F1B)/, blocks);
    const report = await parseFeedbackReport(Buffer.from(raw));
    expect(report?.kind === 'bounce' && report.recipients.length).toBe(100);
  });
});

describe('anything else is not a report', () => {
  it.each(['autoreply.eml', 'read-receipt.eml'])('%s', async (name) => {
    expect(await parseFeedbackReport(fixture(name))).toBeUndefined();
  });

  it('junk', async () => {
    expect(await parseFeedbackReport(Buffer.alloc(0))).toBeUndefined();
    expect(await parseFeedbackReport(Buffer.from('not a message at all\r\n\r\n\0\x01\x02'))).toBeUndefined();
    expect(
      await parseFeedbackReport(
        Buffer.from(
          'Content-Type: multipart/report; report-type=delivery-status; boundary=x\r\n\r\n--x\r\nContent-Type: message/delivery-status\r\n\r\ngarbage',
        ),
      ),
    ).toBeUndefined();
  });
});
