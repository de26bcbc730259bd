import crypto from 'node:crypto';
import type { Logger } from '../logger.js';

/**
 * The mailbox simulator of the built-in catcher (like SES's `@simulator.amazonses.com`): recipients at
 * SIMULATOR_DOMAIN produce each outcome a sender must handle, with no real mailbox involved. `.test` is
 * reserved (RFC 2606), so these addresses can never reach a real server.
 *
 * - `success@`: accepted, like any other address;
 * - `bounce@`: refused at RCPT TO with 550 5.1.1, so the delivery itself bounces;
 * - `complaint@`: accepted, then an ARF abuse report (RFC 5965) about the message comes back;
 * - `asyncbounce@`: accepted, then a delivery status notification (RFC 3464) saying it failed with 5.1.1.
 *
 * A `+label` (`bounce+signup@...`) gives a fresh address with the same outcome: the outcomes are real, so
 * a bounced or complaining address ends on the account's suppression list like any other.
 */
export const SIMULATOR_DOMAIN = 'simulator.mailer.test';

export type SimulatedOutcome = 'success' | 'bounce' | 'complaint' | 'asyncbounce';
const OUTCOMES: ReadonlySet<string> = new Set(['success', 'bounce', 'complaint', 'asyncbounce']);

/** The outcome a recipient address asks for, or undefined for an address outside the simulator. */
export function simulatedOutcome(address: string): SimulatedOutcome | undefined {
  const at = address.lastIndexOf('@');
  if (at < 0 || address.slice(at + 1).toLowerCase() !== SIMULATOR_DOMAIN) return undefined;
  const local = address.slice(0, at).toLowerCase().split('+')[0]!;
  return OUTCOMES.has(local) ? (local as SimulatedOutcome) : undefined;
}

/** What a receiving server answers for a mailbox that does not exist (smtp-server sends `responseCode message`). */
export function simulatedRefusal(address: string): Error & { responseCode: number } {
  return Object.assign(new Error(`5.1.1 <${address}>: Recipient address rejected: simulated hard bounce`), {
    responseCode: 550,
  });
}

/** The header section of a raw message, which both reports quote (text/rfc822-headers) instead of the whole message. */
function headerSection(raw: Buffer): string {
  const text = raw.subarray(0, 64 * 1024).toString('utf8');
  const end = text.search(/\r?\n\r?\n/);
  return end < 0 ? text : text.slice(0, end);
}

const rfc5322Date = (d: Date) => d.toUTCString().replace(/GMT$/, '+0000');

function multipartReport(reportType: string, headers: string[], parts: { type: string; body: string }[]): Buffer {
  const boundary = `=_simulator_${crypto.randomBytes(12).toString('hex')}`;
  const lines = [
    ...headers,
    `Message-ID: <${crypto.randomUUID()}@${SIMULATOR_DOMAIN}>`,
    'Auto-Submitted: auto-replied',
    'MIME-Version: 1.0',
    `Content-Type: multipart/report; report-type=${reportType}; boundary="${boundary}"`,
    '',
    'This is a MIME-formatted message.',
  ];
  for (const part of parts)
    lines.push(`--${boundary}`, `Content-Type: ${part.type}`, '', part.body.replace(/\r?\n/g, '\r\n'), '');
  lines.push(`--${boundary}--`, '');
  return Buffer.from(lines.join('\r\n'));
}

/**
 * The report a complaint@ or asyncbounce@ recipient sends back about `original`, a message the catcher
 * accepted from `mailFrom`: built as the feedback loops and mail servers out there build theirs.
 */
export function simulatedReport(
  outcome: 'complaint' | 'asyncbounce',
  original: Buffer,
  envelope: { mailFrom: string; recipient: string },
  now = new Date(),
): Buffer {
  const date = rfc5322Date(now);
  const quoted = { type: 'text/rfc822-headers; charset=utf-8', body: headerSection(original) };
  if (outcome === 'complaint') {
    return multipartReport(
      'feedback-report',
      [
        `From: Simulated feedback loop <feedback@${SIMULATOR_DOMAIN}>`,
        `To: <${envelope.mailFrom}>`,
        'Subject: Abuse report (simulated)',
        `Date: ${date}`,
      ],
      [
        {
          type: 'text/plain; charset=utf-8',
          body: `This is a simulated abuse report about a message sent to ${envelope.recipient}.`,
        },
        {
          type: 'message/feedback-report',
          body: [
            'Feedback-Type: abuse',
            'User-Agent: mailer-simulator/1',
            'Version: 1',
            `Original-Mail-From: <${envelope.mailFrom}>`,
            `Original-Rcpt-To: <${envelope.recipient}>`,
            `Arrival-Date: ${date}`,
          ].join('\n'),
        },
        quoted,
      ],
    );
  }
  const diagnostic = `550 5.1.1 <${envelope.recipient}>: Recipient address rejected: simulated asynchronous bounce`;
  return multipartReport(
    'delivery-status',
    [
      `From: Mail Delivery System <mailer-daemon@${SIMULATOR_DOMAIN}>`,
      `To: <${envelope.mailFrom}>`,
      'Subject: Undelivered Mail Returned to Sender (simulated)',
      `Date: ${date}`,
    ],
    [
      {
        type: 'text/plain; charset=utf-8',
        body: `Your message could not be delivered to ${envelope.recipient}:\n${diagnostic}`,
      },
      {
        type: 'message/delivery-status',
        body: [
          `Reporting-MTA: dns; ${SIMULATOR_DOMAIN}`,
          `Arrival-Date: ${date}`,
          '',
          `Final-Recipient: rfc822; ${envelope.recipient}`,
          'Action: failed',
          'Status: 5.1.1',
          `Diagnostic-Code: smtp; ${diagnostic}`,
        ].join('\n'),
      },
      quoted,
    ],
  );
}

/** The wait before each attempt to hand a report over: the first, then the retries. */
const REPORT_DELAYS_MS = [100, 250, 500, 1000, 2000, 4000, 8000, 15_000];

/**
 * Hands reports over as a mail server would: shortly after the message was accepted, and again later
 * while the receiving side asks to retry (it does while the email's delivery is not yet recorded).
 */
export function createReportFeeder(deliver: (report: Buffer, rcptTo: string[]) => Promise<unknown>, logger: Logger) {
  const timers = new Set<NodeJS.Timeout>();
  let closed = false;
  function attempt(report: Buffer, rcptTo: string[], n: number): void {
    if (closed) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      deliver(report, rcptTo).catch((err: unknown) => {
        if (n + 1 < REPORT_DELAYS_MS.length) return attempt(report, rcptTo, n + 1);
        logger.warn({ err }, 'simulated report dropped after retries');
      });
    }, REPORT_DELAYS_MS[n]);
    timers.add(timer);
  }
  return {
    feed: (report: Buffer, rcptTo: string[]) => attempt(report, rcptTo, 0),
    /** Forgets reports not handed over yet (the service is stopping). */
    close(): void {
      closed = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
  };
}
