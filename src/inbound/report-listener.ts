import { SMTPServer, type SMTPServerAddress, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import type { InboundRecipient } from '../domain/entities/inbound.js';
import type { Logger } from '../logger.js';
import { inSession, limitSessions, listenSmtp, readMessage, type Listening } from './smtp-listen.js';
import { createSlots, seconds } from './smtp-slots.js';

/**
 * Reports are small: RFC 3464 and 5965 reports quote the original's headers, or the whole original, which
 * most servers cut (Postfix at 50 KB). Beyond this a message is refused (552) before it is read; a report
 * quoting a larger original whole is lost, which costs less than reading megabytes from anyone who connects.
 */
export const MAX_INBOUND_BYTES = 1024 * 1024;
/** Connections sending a message (from its DATA on) at once; more are answered 421 (reports trickle in, never in floods). */
export const MAX_INBOUND_CLIENTS = 50;
/**
 * Connections not yet at DATA at once, a pool apart (smtp-slots.ts): when it is full, a new connection closes
 * the one that has been waiting the longest.
 */
export const MAX_INBOUND_SETTING_UP = 50;
/** Recipients of one transaction: a report goes to one address (its return path or the feedback-loop address). */
export const MAX_INBOUND_RECIPIENTS = 10;
/**
 * Recipients refused on one connection before it is closed (421): each refusal is a lookup, and a client that
 * keeps guessing addresses is harvesting them, not delivering mail (Postfix's smtpd_hard_error_limit is 20).
 */
export const MAX_REFUSED_RECIPIENTS = 20;
/** Silence after which a connection is closed (during DATA; before it, `limits.setupMs` is the shorter bound). */
export const INBOUND_SOCKET_TIMEOUT_MS = 30_000;
/** The longest a connection may last however it trickles its bytes, so a slow client cannot hold a slot forever. */
export const MAX_INBOUND_SESSION_MS = 5 * 60_000;

export type InboundServer = Listening;

/** What `onMessage` made of a message: `refused` is answered 550 5.7.1, anything else 250. */
export type InboundVerdict = 'refused' | (string & {});

/** A recipient an inbound route took, as RCPT TO gave it. */
export interface RoutedRecipient {
  address: string;
  recipient: InboundRecipient;
}

/** What a message for inbound routes arrived with. */
export interface RoutedEnvelope {
  recipients: RoutedRecipient[];
  /** MAIL FROM ('' for the null sender). */
  mailFrom: string;
  remoteAddress: string;
  /** The name the client gave in EHLO or HELO. */
  helo: string;
}

/**
 * Mail for inbound routes (services/inbound-mail-service.ts): which recipients are taken, and the message
 * streamed to storage as it arrives.
 */
export interface RoutedMail {
  /** The largest message taken for a route (MAILER_INBOUND_MAX_BYTES), announced in EHLO `SIZE`. */
  maxBytes: number;
  /** RCPT TO: a route's recipient, `report` for the report handling (`onMessage`), undefined for 550 5.1.1. */
  recipient(address: string): Promise<InboundRecipient | 'report' | undefined>;
  /**
   * Stores the message (`source`, DATA as it arrives, read to its end whatever happens) for its route recipients;
   * answers once it is committed, with its bytes when they were small enough to keep in memory (a report mailed
   * in the same transaction is handled from them), or `too_large` past `maxBytes` (nothing kept). Throws when
   * the sender should try again later.
   */
  receive(source: AsyncIterable<Buffer>, envelope: RoutedEnvelope): Promise<{ raw: Buffer | undefined } | 'too_large'>;
}

/**
 * Thrown by `RoutedMail.receive` for a message that can never be taken as it is (its MIME structure beyond what the
 * parser reads): answered `554 5.6.0`, so the sending server returns it to its sender instead of retrying.
 */
export class UnreadableMessage extends Error {}

const reply = (code: number, text: string) => Object.assign(new Error(text), { responseCode: code });

/** Reads a DATA stream to its end, keeping nothing: the reply to DATA comes only after the message. */
async function drain(stream: SMTPServerDataStream): Promise<void> {
  if (stream.readableEnded || stream.destroyed) return;
  await new Promise<void>((resolve) => {
    stream.on('end', resolve);
    stream.on('close', resolve);
    stream.on('error', () => resolve());
    stream.resume();
  });
}

/**
 * The SMTP listener reports are mailed back to (complaints, bounce reports). It takes mail for any
 * address `acceptsRecipient` allows and answers once `onMessage` has judged it: 250 when accepted,
 * `550 5.7.1` when refused (a message that carries no proof of being a report about an email of ours,
 * CONTRACT.md), and 451 when `onMessage` fails, so the sending server tries again later.
 *
 * Refusing cannot start a bounce loop: this listener never sends mail itself, and a refused message
 * comes back to nobody but its own envelope sender. Bounces and automatic reports travel with the null
 * sender, so their refusal produces nothing at all (RFC 5321 6.1/3464: no notification about a
 * notification); a refused message with a sender is bounced by its own server to that sender, and if
 * that sender were one of our return paths, the bounce (null sender) would be refused in turn and end there.
 *
 * STARTTLS with the service's certificate (senders of reports use it opportunistically, as MTAs do), no
 * AUTH: anyone may mail a report, and the report itself must prove it (above). Bounded: `limits.perAddress`
 * connections from one address; MAX_INBOUND_SETTING_UP connections on their way to DATA, each closed unless it
 * starts DATA within `limits.setupMs` (from the greeting, and again after each message); MAX_INBOUND_CLIENTS
 * connections from DATA on, a pool that idle strangers cannot fill; MAX_INBOUND_RECIPIENTS recipients,
 * MAX_INBOUND_BYTES per message, idle and total time per connection.
 */
export async function startInboundServer(options: {
  host: string;
  port: number;
  logger: Logger;
  /** Whether mail is taken for an address (RCPT TO); a refused one is answered 550 5.1.1. */
  acceptsRecipient: (address: string) => boolean;
  onMessage: (raw: Buffer, envelope: { rcptTo: string[]; remoteAddress: string }) => Promise<InboundVerdict>;
  /** The STARTTLS certificate (tls-certificate.ts). */
  tls: { cert: string; key: string };
  /** Connections one address may hold, and how long a connection has to start DATA. */
  limits: { perAddress: number; setupMs: number };
  /** Peers (TCP proxies) whose connections begin with a PROXY protocol header naming the client's address. */
  proxyProtocolFrom?: string[];
  /** Mail for inbound routes: with it, this listener is their domains' MX and `recipient` decides every RCPT TO. */
  routes?: RoutedMail;
}): Promise<InboundServer> {
  const { logger, routes } = options;
  /** Recipients each connection was refused (a 421 closes it at MAX_REFUSED_RECIPIENTS). */
  const refusedRecipients = new WeakMap<SMTPServerSession, number>();
  /** What RCPT TO found each recipient to be (the address objects smtp-server keeps in the envelope). */
  const kinds = new WeakMap<SMTPServerAddress, InboundRecipient>();
  const recipientKind = async (address: string): Promise<InboundRecipient | 'report' | undefined> => {
    if (!routes) return options.acceptsRecipient(address) ? 'report' : undefined;
    return routes.recipient(address);
  };
  const slots = createSlots(() => server, {
    settingUp: MAX_INBOUND_SETTING_UP,
    established: MAX_INBOUND_CLIENTS,
    perAddress: options.limits.perAddress,
    // No one authenticates here: every connection of an address counts against it.
    perAddressCounts: 'all',
    setupMs: options.limits.setupMs,
    tooSlow: `4.4.2 no DATA within ${seconds(options.limits.setupMs)}, closing`,
  });
  const server: SMTPServer = new SMTPServer({
    name: 'mailer-inbound',
    banner: 'mailer inbound MX',
    authOptional: true,
    disabledCommands: ['AUTH'],
    key: options.tls.key,
    cert: options.tls.cert,
    // Announced in EHLO and checked against MAIL FROM's SIZE=; a transaction for reports only is held to
    // MAX_INBOUND_BYTES all the same (at RCPT TO when SIZE= says so, else at the end of DATA).
    size: routes?.maxBytes ?? MAX_INBOUND_BYTES,
    // smtp-server's own count of every connection, a backstop only (as on the submission listener).
    maxClients: 2 * MAX_INBOUND_SETTING_UP + MAX_INBOUND_CLIENTS,
    socketTimeout: INBOUND_SOCKET_TIMEOUT_MS,
    closeTimeout: 5_000,
    // Nothing reads the client's host name; a DNS query per stranger's connection is work for nothing.
    disableReverseLookup: true,
    // Behind a proxy, the client's own address is what its cap counts.
    useProxy: options.proxyProtocolFrom?.length ? options.proxyProtocolFrom : false,
    logger: false,
    onConnect: slots.onConnect,
    onClose: slots.onClose,
    onRcptTo(address, session, callback) {
      if (session.envelope.rcptTo.length >= MAX_INBOUND_RECIPIENTS) {
        return callback(Object.assign(new Error('4.5.3 too many recipients'), { responseCode: 452 }));
      }
      recipientKind(address.address).then(
        (kind) => {
          if (kind === undefined) {
            // Each refusal cost a lookup: a client guessing addresses is cut off, as Postfix's hard error limit does.
            const refused = (refusedRecipients.get(session) ?? 0) + 1;
            refusedRecipients.set(session, refused);
            if (refused >= MAX_REFUSED_RECIPIENTS)
              return callback(reply(421, `4.7.0 too many unknown recipients (${refused}), closing`));
            return callback(reply(550, '5.1.1 no such recipient here'));
          }
          if (kind === 'report') {
            const args = session.envelope.mailFrom ? session.envelope.mailFrom.args : false;
            const declared = Number(args ? args.SIZE : undefined);
            if (declared > MAX_INBOUND_BYTES)
              return callback(
                reply(552, `5.3.4 message exceeds the maximum message size for this recipient (${MAX_INBOUND_BYTES})`),
              );
          } else kinds.set(address, kind);
          callback();
        },
        (err: unknown) => {
          logger.warn({ err }, 'inbound recipient not looked up; asked to retry');
          callback(reply(451, '4.3.0 temporary failure, try again later'));
        },
      );
    },
    onData(stream, session, callback) {
      const admitted = slots.establish(session);
      // The next message's DATA is due within the deadline again, counted from this one's answer.
      const answer = (err?: Error) => {
        slots.rearm(session);
        callback(err);
      };
      const routed = session.envelope.rcptTo.flatMap((r) => {
        const recipient = kinds.get(r);
        return recipient ? [{ address: r.address, recipient }] : [];
      });
      if (routes && routed.length > 0) {
        const reports = session.envelope.rcptTo.filter((r) => !kinds.has(r)).map((r) => r.address);
        const envelope: RoutedEnvelope = {
          recipients: routed,
          mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          remoteAddress: session.remoteAddress,
          helo: session.hostNameAppearsAs,
        };
        void inSession(session, () => receiveRouted(routes, stream, envelope, reports, admitted, answer, callback));
        return;
      }
      void inSession(session, () =>
        readMessage(stream, MAX_INBOUND_BYTES)
          .then(async (raw) => {
            // Read to its end all the same: the reply to DATA comes after the message.
            if (!admitted)
              return callback(
                Object.assign(
                  new Error(`4.7.0 too many messages in flight (${MAX_INBOUND_CLIENTS}), try again later`),
                  { responseCode: 421 },
                ),
              );
            if (!raw)
              return answer(
                Object.assign(new Error('5.3.4 message exceeds the fixed maximum message size'), { responseCode: 552 }),
              );
            const rcptTo = session.envelope.rcptTo.map((r) => r.address);
            const verdict = await options.onMessage(raw, { rcptTo, remoteAddress: session.remoteAddress });
            if (verdict !== 'refused') return answer();
            answer(
              Object.assign(new Error('5.7.1 not accepted: no valid report token for the email it is about'), {
                responseCode: 550,
              }),
            );
          })
          .catch((err: unknown) => {
            logger.warn(
              { err, from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '' },
              'inbound message not handled; asked to retry',
            );
            answer(Object.assign(new Error('4.3.0 temporary failure, try again later'), { responseCode: 451 }));
          }),
      );
    },
  });
  limitSessions(server, MAX_INBOUND_SESSION_MS);

  /**
   * A message with at least one route recipient: streamed to storage (never whole in memory), answered 250 once
   * committed, 552 past the routes' cap, 451 when storing failed (nothing kept: the sender tries again). Report
   * recipients of the same transaction get the message as they would alone when it is small enough for a report.
   */
  async function receiveRouted(
    mail: RoutedMail,
    stream: SMTPServerDataStream,
    envelope: RoutedEnvelope,
    reportRecipients: string[],
    admitted: boolean,
    answer: (err?: Error) => void,
    refuse: (err: Error) => void,
  ): Promise<void> {
    if (!admitted) {
      await drain(stream);
      return refuse(reply(421, `4.7.0 too many messages in flight (${MAX_INBOUND_CLIENTS}), try again later`));
    }
    try {
      const received = await mail.receive(stream, envelope);
      if (received === 'too_large')
        return answer(reply(552, `5.3.4 message exceeds the fixed maximum message size (${mail.maxBytes})`));
      if (reportRecipients.length > 0) {
        if (received.raw === undefined)
          logger.info(
            { recipients: reportRecipients.length },
            'message for routes and report addresses too large for a report; taken for the routes only',
          );
        else
          await options
            .onMessage(received.raw, { rcptTo: reportRecipients, remoteAddress: envelope.remoteAddress })
            .catch((err: unknown) => logger.warn({ err }, 'report part of a routed message not handled'));
      }
      answer();
    } catch (err) {
      await drain(stream);
      if (err instanceof UnreadableMessage) {
        logger.info({ err, from: envelope.mailFrom }, 'inbound message refused: it could not be parsed');
        return answer(reply(554, `5.6.0 ${err.message}`));
      }
      logger.warn({ err, from: envelope.mailFrom }, 'inbound message not stored; asked to retry');
      answer(reply(451, '4.3.0 temporary failure, try again later'));
    }
  }

  return listenSmtp(server, options.host, options.port, (err) => logger.warn({ err }, 'inbound listener error'));
}
