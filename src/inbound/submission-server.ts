import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import type { BytesInFlight } from '../bytes-in-flight.js';
import { readMailbox } from '../domain/address.js';
import { LIMITS } from '../domain/limits.js';
import type { Logger } from '../logger.js';
import { inSession, limitSessions, listenSmtp, type Listening } from './smtp-listen.js';
import { smtpReply, smtpReplyFor } from './smtp-replies.js';
import { assertRoomForMessage, readCountedMessage } from './submission-bytes.js';
import { createSlots, seconds } from './smtp-slots.js';

/**
 * The largest message read: the API's total limit (LIMITS.emailBytes, decoded content) as it travels in MIME,
 * base64 (4/3, plus CRLF every 76 characters) and a megabyte of headers and part boundaries. The decoded
 * limits themselves are judged afterwards, by the same rules as POST /emails.
 */
export const SUBMISSION_MAX_BYTES = Math.ceil(((LIMITS.emailBytes * 4) / 3) * (78 / 76)) + 1024 * 1024;
/** Authenticated connections served at once; an AUTH beyond is answered 421 and its connection closed. */
export const MAX_SUBMISSION_CLIENTS = 100;
/**
 * Connections not yet authenticated at once, a pool apart from the authenticated ones (smtp-slots.ts): when
 * it is full, a new connection closes the one that has been waiting the longest.
 */
export const MAX_UNAUTHENTICATED_SUBMISSIONS = 100;
/** Silence after which a connection is closed. */
export const SUBMISSION_SOCKET_TIMEOUT_MS = 60_000;
/** The longest an authenticated connection may last: a 15 MB message over a slow link fits; a client holding a slot forever does not. */
export const MAX_SUBMISSION_SESSION_MS = 10 * 60_000;

/** What the listener asks of the service; `Credential` is what a successful AUTH leaves in the session. */
export interface SubmissionHandler<Credential> {
  /** AUTH PLAIN/LOGIN: the password is an API key (the user name is ignored). Throws to refuse. */
  login(password: string): Promise<Credential>;
  /** MAIL FROM: whether this credential may start a message from `mailFrom` ('' for the null sender). */
  beginMessage(credential: Credential, mailFrom: string): Promise<void>;
  /** The whole message and its envelope; answers the id of the email it became. */
  submit(credential: Credential, raw: Buffer, envelope: { mailFrom: string; rcptTo: string[] }): Promise<string>;
  /** The API key whose bytes in flight a message counts in (with its REST and gRPC requests). */
  bytesKey(credential: Credential): string;
}

/**
 * The SMTP submission listener (RFC 6409 style): STARTTLS with `tls`, then AUTH PLAIN or LOGIN. AUTH is
 * neither offered nor taken before STARTTLS (as Postfix's smtpd_tls_auth_only): a client that would log in
 * wherever AUTH is offered (Python's smtplib.login(), swaks without --tls) finds none on a connection in clear
 * and never sends its API key there.
 * Each message is handed to `handler.submit`, and every AppError it throws is answered by smtp-replies.ts's
 * table (535, 550 5.7.1, 552, 451/452 ...). Bounded: `limits.perAddress` unauthenticated connections from
 * one address and MAX_UNAUTHENTICATED_SUBMISSIONS from all, each closed unless it has done STARTTLS and AUTH
 * within `limits.setupMs`; MAX_SUBMISSION_CLIENTS authenticated connections, a pool of their own that no
 * stranger can fill; the spec's recipient limit per message (452 4.5.3 beyond, so the client sends the rest in
 * another transaction), SUBMISSION_MAX_BYTES per message (552), idle and total time per connection.
 */
export async function startSubmissionServer<Credential>(options: {
  host: string;
  port: number;
  hostname: string;
  tls: { cert: string; key: string };
  logger: Logger;
  handler: SubmissionHandler<Credential>;
  /** Message bytes held at once, per process and per key (shared with REST and gRPC): 452 beyond. */
  bytesInFlight: BytesInFlight;
  /** Unauthenticated connections one address may hold, and how long one has to do STARTTLS and AUTH. */
  limits: { perAddress: number; setupMs: number };
  /** Peers (TCP proxies) whose connections begin with a PROXY protocol header naming the client's address. */
  proxyProtocolFrom?: string[];
}): Promise<Listening> {
  const { logger, handler } = options;
  const credentialOf = (session: SMTPServerSession) => session.user as Credential;
  const slots = createSlots(() => server, {
    settingUp: MAX_UNAUTHENTICATED_SUBMISSIONS,
    established: MAX_SUBMISSION_CLIENTS,
    perAddress: options.limits.perAddress,
    perAddressCounts: 'setup',
    setupMs: options.limits.setupMs,
    tooSlow: `4.4.2 STARTTLS and AUTH not done within ${seconds(options.limits.setupMs)}, closing`,
  });
  const server: SMTPServer = new SMTPServer({
    name: options.hostname,
    banner: 'mailer submission: STARTTLS, then AUTH with an API key as the password',
    key: options.tls.key,
    cert: options.tls.cert,
    authMethods: ['PLAIN', 'LOGIN'],
    allowInsecureAuth: false,
    authOptional: false,
    size: SUBMISSION_MAX_BYTES,
    // smtp-server's own count of every connection, a backstop only: the pools above are the limits (room is
    // left for connections that have not reached onConnect yet, so a new one can still push out an old one).
    maxClients: 2 * MAX_UNAUTHENTICATED_SUBMISSIONS + MAX_SUBMISSION_CLIENTS,
    socketTimeout: SUBMISSION_SOCKET_TIMEOUT_MS,
    closeTimeout: 5_000,
    // Nothing reads the client's host name; a DNS query per stranger's connection is work for nothing.
    disableReverseLookup: true,
    // Behind a proxy, the client's own address is what its cap counts.
    useProxy: options.proxyProtocolFrom?.length ? options.proxyProtocolFrom : false,
    logger: false,
    onConnect(session, callback) {
      // No AUTH on a connection in clear, not even in the EHLO list (smtp-server would list it, then answer
      // 538 only after the client has sent its credential); STARTTLS enables it in onSecure.
      session.disabledCommands = ['AUTH'];
      slots.onConnect(session, callback);
    },
    onSecure(_socket, session, callback) {
      session.disabledCommands = undefined;
      callback();
    },
    onClose(session) {
      slots.onClose(session);
    },
    onAuth(auth, session, callback) {
      inSession(session, () => handler.login(auth.password ?? '')).then(
        (user) => {
          if (!slots.establish(session))
            return callback(
              smtpReply(421, `4.7.0 too many authenticated connections (${MAX_SUBMISSION_CLIENTS}), try again later`),
            );
          callback(null, { user });
        },
        (err: unknown) => callback(smtpReplyFor(err)),
      );
    },
    onMailFrom(address, session, callback) {
      // With AUTH disabled before STARTTLS, smtp-server no longer asks for it itself.
      if (!session.user) return callback(smtpReply(530, '5.7.0 Must issue a STARTTLS command first, then AUTH'));
      if (address.address !== '' && typeof readMailbox(address.address) === 'string') {
        return callback(smtpReply(553, '5.1.7 the sender address is not a valid email address'));
      }
      try {
        assertRoomForMessage(
          options.bytesInFlight,
          handler.bytesKey(credentialOf(session)),
          address.args,
          SUBMISSION_MAX_BYTES,
        );
      } catch (err) {
        return callback(smtpReplyFor(err));
      }
      inSession(session, () => handler.beginMessage(credentialOf(session), address.address)).then(
        () => callback(),
        (err: unknown) => callback(smtpReplyFor(err)),
      );
    },
    onRcptTo(address, session, callback) {
      if (session.envelope.rcptTo.length >= LIMITS.recipients) {
        return callback(
          smtpReply(
            452,
            `4.5.3 too many recipients: at most ${LIMITS.recipients} per message, send the rest in another`,
          ),
        );
      }
      if (typeof readMailbox(address.address) === 'string')
        return callback(smtpReply(553, '5.1.3 not a valid email address'));
      callback();
    },
    onData(stream, session, callback) {
      const envelope = {
        mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
        rcptTo: session.envelope.rcptTo.map((r) => r.address),
      };
      const meter = options.bytesInFlight.meter(handler.bytesKey(credentialOf(session)));
      void inSession(session, () =>
        readCountedMessage(stream, SUBMISSION_MAX_BYTES, meter)
          .then(async (raw) => {
            if (!raw)
              return callback(
                smtpReply(552, `5.3.4 message exceeds the fixed maximum message size of ${SUBMISSION_MAX_BYTES} bytes`),
              );
            const id = await handler.submit(credentialOf(session), raw, envelope);
            callback(null, `2.0.0 OK: queued as ${id}`);
          })
          .catch((err: unknown) => {
            const reply = smtpReplyFor(err);
            if (reply.responseCode === 451)
              logger.warn({ err }, 'submitted message not accepted; asked the client to retry');
            callback(reply);
            // The message's bytes count until it is answered (parsed, stored or refused), or its connection dropped.
          })
          .finally(() => meter.release()),
      );
    },
  });
  limitSessions(server, MAX_SUBMISSION_SESSION_MS);

  return listenSmtp(server, options.host, options.port, (err) => logger.warn({ err }, 'submission listener error'));
}
