import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import { readMailbox } from '../domain/address.js';
import { LIMITS } from '../domain/limits.js';
import type { Logger } from '../logger.js';
import { inSession, limitSessions, listenSmtp, readMessage, type Listening } from './smtp-listen.js';
import { smtpReply, smtpReplyFor } from './smtp-replies.js';

/**
 * The largest message read: the API's total limit (LIMITS.emailBytes, decoded content) as it travels in MIME,
 * base64 (4/3, plus CRLF every 76 characters) and a megabyte of headers and part boundaries. The decoded
 * limits themselves are judged afterwards, by the same rules as POST /emails.
 */
export const SUBMISSION_MAX_BYTES = Math.ceil(((LIMITS.emailBytes * 4) / 3) * (78 / 76)) + 1024 * 1024;
/** Connections served at once; more are answered 421 and closed. */
export const MAX_SUBMISSION_CLIENTS = 100;
/** Silence after which a connection is closed. */
export const SUBMISSION_SOCKET_TIMEOUT_MS = 60_000;
/** The longest a connection may last: a 15 MB message over a slow link fits; a client holding a slot forever does not. */
export const MAX_SUBMISSION_SESSION_MS = 10 * 60_000;

/** What the listener asks of the service; `Credential` is what a successful AUTH leaves in the session. */
export interface SubmissionHandler<Credential> {
  /** AUTH PLAIN/LOGIN: the password is an API key (the user name is ignored). Throws to refuse. */
  login(password: string): Promise<Credential>;
  /** MAIL FROM: whether this credential may start a message from `mailFrom` ('' for the null sender). */
  beginMessage(credential: Credential, mailFrom: string): Promise<void>;
  /** The whole message and its envelope; answers the id of the email it became. */
  submit(credential: Credential, raw: Buffer, envelope: { mailFrom: string; rcptTo: string[] }): Promise<string>;
}

/**
 * The SMTP submission listener (RFC 6409 style): STARTTLS with `tls`, then AUTH PLAIN or LOGIN; AUTH on a
 * connection that is not encrypted is refused (538), so an API key never crosses the network in clear.
 * Each message is handed to `handler.submit`, and every AppError it throws is answered by smtp-replies.ts's
 * table (535, 550 5.7.1, 552, 451/452 ...). Bounded: MAX_SUBMISSION_CLIENTS connections, the spec's recipient
 * limit per message (452 4.5.3 beyond, so the client sends the rest in another transaction),
 * SUBMISSION_MAX_BYTES per message (552), idle and total time per connection.
 */
export async function startSubmissionServer<Credential>(options: {
  host: string;
  port: number;
  hostname: string;
  tls: { cert: string; key: string };
  logger: Logger;
  handler: SubmissionHandler<Credential>;
}): Promise<Listening> {
  const { logger, handler } = options;
  const credentialOf = (session: SMTPServerSession) => session.user as Credential;
  const server = new SMTPServer({
    name: options.hostname,
    banner: 'mailer submission: STARTTLS, then AUTH with an API key as the password',
    key: options.tls.key,
    cert: options.tls.cert,
    authMethods: ['PLAIN', 'LOGIN'],
    allowInsecureAuth: false,
    authOptional: false,
    size: SUBMISSION_MAX_BYTES,
    maxClients: MAX_SUBMISSION_CLIENTS,
    socketTimeout: SUBMISSION_SOCKET_TIMEOUT_MS,
    closeTimeout: 5_000,
    logger: false,
    onAuth(auth, session, callback) {
      inSession(session, () => handler.login(auth.password ?? '')).then((user) => callback(null, { user }), (err: unknown) => callback(smtpReplyFor(err)));
    },
    onMailFrom(address, session, callback) {
      if (address.address !== '' && typeof readMailbox(address.address) === 'string') {
        return callback(smtpReply(553, '5.1.7 the sender address is not a valid email address'));
      }
      inSession(session, () => handler.beginMessage(credentialOf(session), address.address)).then(() => callback(), (err: unknown) => callback(smtpReplyFor(err)));
    },
    onRcptTo(address, session, callback) {
      if (session.envelope.rcptTo.length >= LIMITS.recipients) {
        return callback(smtpReply(452, `4.5.3 too many recipients: at most ${LIMITS.recipients} per message, send the rest in another`));
      }
      if (typeof readMailbox(address.address) === 'string') return callback(smtpReply(553, '5.1.3 not a valid email address'));
      callback();
    },
    onData(stream, session, callback) {
      const envelope = {
        mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
        rcptTo: session.envelope.rcptTo.map((r) => r.address),
      };
      void inSession(session, () => readMessage(stream, SUBMISSION_MAX_BYTES).then(async (raw) => {
        if (!raw) return callback(smtpReply(552, `5.3.4 message exceeds the fixed maximum message size of ${SUBMISSION_MAX_BYTES} bytes`));
        const id = await handler.submit(credentialOf(session), raw, envelope);
        callback(null, `2.0.0 OK: queued as ${id}`);
      }).catch((err: unknown) => {
        const reply = smtpReplyFor(err);
        if (reply.responseCode === 451) logger.warn({ err }, 'submitted message not accepted; asked the client to retry');
        callback(reply);
      }));
    },
  });
  limitSessions(server, MAX_SUBMISSION_SESSION_MS);

  return listenSmtp(server, options.host, options.port, (err) => logger.warn({ err }, 'submission listener error'));
}
