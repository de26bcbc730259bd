import { SMTPServer } from 'smtp-server';
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
/** Silence after which a connection is closed (during DATA; before it, `limits.setupMs` is the shorter bound). */
export const INBOUND_SOCKET_TIMEOUT_MS = 30_000;
/** The longest a connection may last however it trickles its bytes, so a slow client cannot hold a slot forever. */
export const MAX_INBOUND_SESSION_MS = 5 * 60_000;

export type InboundServer = Listening;

/** What `onMessage` made of a message: `refused` is answered 550 5.7.1, anything else 250. */
export type InboundVerdict = 'refused' | (string & {});

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
}): Promise<InboundServer> {
  const { logger } = options;
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
    banner: 'mailer feedback listener',
    authOptional: true,
    disabledCommands: ['AUTH'],
    key: options.tls.key,
    cert: options.tls.cert,
    size: MAX_INBOUND_BYTES,
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
      if (!options.acceptsRecipient(address.address)) {
        return callback(Object.assign(new Error('5.1.1 no such return path'), { responseCode: 550 }));
      }
      callback();
    },
    onData(stream, session, callback) {
      const admitted = slots.establish(session);
      // The next message's DATA is due within the deadline again, counted from this one's answer.
      const answer = (err?: Error) => {
        slots.rearm(session);
        callback(err);
      };
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

  return listenSmtp(server, options.host, options.port, (err) => logger.warn({ err }, 'inbound listener error'));
}
