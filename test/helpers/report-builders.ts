/**
 * Bounce (RFC 3464 DSN) and complaint (RFC 5965 ARF) reports as a receiving system writes them about a
 * message it got, for the tests that mail them back to the return path. Unlike the fixtures of
 * reports.ts these are made from the message the MX or relay actually received.
 */
import crypto from 'node:crypto';

/** The header block of a message (everything before the first empty line), with CRLF line ends. */
export function headerBlock(raw: Buffer | string): string {
  const text = raw.toString().replace(/\r?\n/g, '\r\n');
  const end = text.indexOf('\r\n\r\n');
  return end < 0 ? text : text.slice(0, end + 2);
}

/** `headers` without the fields named (case-insensitive), continuation lines included. */
export function withoutHeaders(headers: string, names: string[]): string {
  const drop = new Set(names.map((n) => n.toLowerCase()));
  const out: string[] = [];
  let dropping = false;
  for (const line of headers.split('\r\n')) {
    if (/^[ \t]/.test(line)) {
      if (!dropping) out.push(line);
      continue;
    }
    dropping = drop.has(line.slice(0, line.indexOf(':')).trim().toLowerCase());
    if (!dropping) out.push(line);
  }
  return out.join('\r\n');
}

const boundary = () => `=_report_${crypto.randomBytes(8).toString('hex')}`;

export interface DsnOptions {
  recipient: string;
  /** The enhanced status code, `5.1.1` by default. */
  status?: string;
  diagnostic?: string;
  reportingMta?: string;
  /** The original's headers, quoted in a text/rfc822-headers part; left out when undefined. */
  originalHeaders?: string;
}

/** A failure DSN from a receiving MTA's MAILER-DAEMON, about one recipient. */
export function buildDsn(options: DsnOptions): Buffer {
  const b = boundary();
  const mta = options.reportingMta ?? 'mx.receiver.test';
  const status = options.status ?? '5.1.1';
  const diagnostic =
    options.diagnostic ?? `550 ${status} <${options.recipient}>: Recipient address rejected: User unknown`;
  const parts = [
    `Content-Type: text/plain; charset=us-ascii\r\n\r\nYour message could not be delivered to <${options.recipient}>.\r\n`,
    'Content-Type: message/delivery-status\r\n\r\n' +
      `Reporting-MTA: dns; ${mta}\r\n\r\n` +
      `Final-Recipient: rfc822; ${options.recipient}\r\nAction: failed\r\nStatus: ${status}\r\n` +
      `Remote-MTA: dns; ${mta}\r\nDiagnostic-Code: smtp; ${diagnostic}\r\n`,
  ];
  if (options.originalHeaders !== undefined)
    parts.push(`Content-Type: text/rfc822-headers\r\n\r\n${options.originalHeaders}`);
  return Buffer.from(
    [
      `From: Mail Delivery System <MAILER-DAEMON@${mta}>`,
      'To: postmaster@mailer.test',
      'Subject: Undelivered Mail Returned to Sender',
      `Date: ${new Date().toUTCString()}`,
      `Message-ID: <${crypto.randomBytes(8).toString('hex')}@${mta}>`,
      'Auto-Submitted: auto-replied',
      'MIME-Version: 1.0',
      `Content-Type: multipart/report; report-type=delivery-status; boundary="${b}"`,
      '',
      ...parts.map((p) => `--${b}\r\n${p}`),
      `--${b}--`,
      '',
    ].join('\r\n'),
  );
}

export interface ArfOptions {
  /** `abuse` by default. */
  feedbackType?: string;
  /** The reported message's headers, quoted in a text/rfc822-headers part. */
  originalHeaders: string;
  /** Original-Rcpt-To: the complainer, when the feedback loop does not redact it. */
  originalRcptTo?: string;
  sourceIp?: string;
}

/** An abuse report from a mailbox provider's feedback loop. */
export function buildArf(options: ArfOptions): Buffer {
  const b = boundary();
  return Buffer.from(
    [
      'From: Feedback Loop <fbl@receiver.test>',
      'To: abuse@mailer.test',
      'Subject: Abuse report',
      `Date: ${new Date().toUTCString()}`,
      `Message-ID: <${crypto.randomBytes(8).toString('hex')}@receiver.test>`,
      'MIME-Version: 1.0',
      `Content-Type: multipart/report; report-type=feedback-report; boundary="${b}"`,
      '',
      `--${b}`,
      'Content-Type: text/plain; charset=us-ascii',
      '',
      'This is an email abuse report for a message received from you.',
      `--${b}`,
      'Content-Type: message/feedback-report',
      '',
      `Feedback-Type: ${options.feedbackType ?? 'abuse'}`,
      'User-Agent: Receiver-FBL/1.0',
      'Version: 1',
      `Source-IP: ${options.sourceIp ?? '127.0.0.1'}`,
      ...(options.originalRcptTo ? [`Original-Rcpt-To: ${options.originalRcptTo}`] : []),
      '',
      `--${b}`,
      'Content-Type: text/rfc822-headers',
      '',
      options.originalHeaders,
      `--${b}--`,
      '',
    ].join('\r\n'),
  );
}
