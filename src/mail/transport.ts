import nodemailer from 'nodemailer';
import type { SendMailOptions } from 'nodemailer/lib/mailer';
import { parseConnectionUrl } from 'nodemailer/lib/shared';

/** The mail server's answer for an accepted message. */
export interface SentInfo {
  messageId: string;
  response: string;
  accepted: string[];
  rejected: string[];
  rejectedErrors: unknown[];
}

export interface MailTransport {
  send(message: SendMailOptions): Promise<SentInfo>;
  close(): void;
}

export interface TransportOptions {
  /** Simultaneous SMTP connections; sends beyond this wait for a free one. */
  maxConnections: number;
}

/**
 * A pooled SMTP transport to the smart host (or the built-in catcher). Connections are reused across
 * messages; timeouts are bounded so that a hung server shows up as a soft failure, not a stuck worker.
 */
export function createMailTransport(url: string, options: TransportOptions): MailTransport {
  const parsed = parseConnectionUrl(url) as Record<string, unknown>;
  const transporter = nodemailer.createTransport({
    ...parsed,
    pool: true,
    maxConnections: options.maxConnections,
    maxMessages: Infinity,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
    logger: false,
  });
  return {
    async send(message) {
      const info = await transporter.sendMail(message);
      return {
        messageId: info.messageId,
        response: info.response,
        accepted: (info.accepted as unknown[]).map(String),
        rejected: (info.rejected as unknown[]).map(String),
        rejectedErrors: ((info as { rejectedErrors?: unknown[] }).rejectedErrors ?? []),
      };
    },
    close: () => transporter.close(),
  };
}
