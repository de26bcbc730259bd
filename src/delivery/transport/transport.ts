import nodemailer from 'nodemailer';
import { parseConnectionUrl } from 'nodemailer/lib/shared';
import { sendBuilt, type BuiltMessage } from './send-built.js';
import { classifySmtpError, rejectedRecipients, type SmtpFailure } from './smtp-outcome.js';
import type { DeliveryTls, EgressContext } from '../../domain/entities/egress.js';

/** A recipient some server accepted, with that server's reply (`mx` is the host, in direct mode). */
export interface AcceptedRecipient {
  address: string;
  response: string;
  mx?: string;
  /** The TLS of the connection that took it, where the transport knows it (direct delivery). */
  tls?: DeliveryTls;
}

/** A recipient a server refused, permanently (`failure.kind` hard) or for now (soft). */
export interface FailedRecipient {
  address: string;
  failure: SmtpFailure;
}

/**
 * What became of every envelope recipient of one message. A transport sorts SMTP results here rather than
 * throwing them: in direct mode one message goes to several servers, and each can answer differently.
 */
export interface TransportResult {
  /** The Message-ID header sent. */
  messageId: string;
  accepted: AcceptedRecipient[];
  /** Refused for good (5xx): bounced, never retried. */
  refused: FailedRecipient[];
  /** Refused for now (4xx, connection failure, time-out): retried later, to these recipients only. */
  deferred: FailedRecipient[];
}

export interface MailTransport {
  /**
   * Sends `message` to `message.envelope.to`; rejects only on a fault of the service itself, never on an SMTP
   * answer. `context` says whose email it is: direct delivery chooses the source-address pool by it.
   */
  send(message: BuiltMessage, context?: EgressContext): Promise<TransportResult>;
  close(): void;
  /** The one server every message goes to (the smart host, the catcher); undefined in direct mode, where each accepted recipient names its MX. */
  readonly host?: string;
}

export interface TransportOptions {
  /** Simultaneous SMTP connections; sends beyond this wait for a free one. */
  maxConnections: number;
  /** The name given in EHLO (MAILER_HOSTNAME). */
  name?: string;
}

/** Bounded so that a hung server shows up as a soft failure, not a stuck worker. */
export const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 } as const;

/**
 * A pooled SMTP transport to one server: the smart host of relay mode, or the built-in catcher.
 * Connections are reused across messages. Whatever the server answers applies to every recipient it did
 * not refuse one by one: its one reply is the relay's verdict on the whole message.
 */
export function createMailTransport(url: string, options: TransportOptions): MailTransport {
  const parsed = parseConnectionUrl(url) as Record<string, unknown>;
  const transporter = nodemailer.createTransport({
    ...parsed,
    ...(options.name === undefined ? {} : { name: options.name }),
    pool: true,
    maxConnections: options.maxConnections,
    maxMessages: Infinity,
    ...SMTP_TIMEOUTS,
    logger: false,
  });
  return {
    async send(message) {
      const recipients = message.envelope.to;
      try {
        const info = await sendBuilt(transporter, message);
        const refused = rejectedRecipients(info as { rejected?: unknown[]; rejectedErrors?: unknown[] });
        const accepted = (info.accepted as unknown[]).map((a) => ({ address: String(a), response: info.response }));
        return { messageId: message.messageId, accepted, ...split(refused) };
      } catch (err) {
        const failure = classifySmtpError(err);
        // A server that refused every recipient names each with its own reply.
        const named = rejectedRecipients(err as { rejected?: unknown[]; rejectedErrors?: unknown[] });
        const failed = named.length > 0 ? named : recipients.map((address) => ({ address, failure }));
        return { messageId: message.messageId, accepted: [], ...split(failed) };
      }
    },
    close: () => transporter.close(),
    host: typeof parsed.host === 'string' ? parsed.host : undefined,
  };
}

/** Failures sorted into refused (hard) and deferred (soft). */
export function split(failed: FailedRecipient[]): { refused: FailedRecipient[]; deferred: FailedRecipient[] } {
  return {
    refused: failed.filter((f) => f.failure.kind === 'hard'),
    deferred: failed.filter((f) => f.failure.kind === 'soft'),
  };
}
