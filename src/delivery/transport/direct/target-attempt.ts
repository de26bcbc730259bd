import type { BuiltMessage } from '../send-built.js';
import { classifySmtpError, rejectedRecipients, type SmtpFailure } from '../smtp-outcome.js';
import type { ObservedReply } from '../../../domain/entities/egress.js';
import type { AcceptedRecipient, FailedRecipient } from '../transport.js';
import { mtaStsFailure } from './mta-sts-route.js';
import { SiteQueueFull, type PooledResult, type PooledSend, type SitePools } from './site-pool.js';

/**
 * What one transaction ended with: every recipient answered for, or a failure that sends it to the next host.
 * `reply` is what the server said (or the local failure, code 0) for the shaper to observe; a failure marked
 * `held` is a deferral of egress shaping itself (the site's queue full), which is not a reply and ends the transaction.
 */
export type Attempt =
  | { done: true; accepted: AcceptedRecipient[]; failed: FailedRecipient[]; reply: ObservedReply; ok: boolean }
  | { done: false; failure: SmtpFailure };

/**
 * Steps before MAIL FROM: a refusal there (a 554 greeting, a 5xx to EHLO) is about this host, not the
 * message, so another MX may well take it (as Postfix's smtp_skip_5xx_greeting).
 */
const SESSION_COMMANDS = new Set(['CONN', 'EHLO', 'HELO', 'LHLO', 'STARTTLS']);

type Sent = { result: PooledResult } | { err: unknown };

/** Node and OpenSSL's ways of saying a TLS handshake failed (as zone-mta's tls-retry reads them). */
const TLS_FAILURE =
  /SSL routines|before secure TLS connection was established|wrong version number|alert handshake failure/i;

export function isTlsFailure(err: unknown): boolean {
  const e = err as { code?: string; originalCode?: string; message?: string };
  return e.code === 'ETLS' || String(e.originalCode ?? '').startsWith('ERR_SSL_') || TLS_FAILURE.test(e.message ?? '');
}

/**
 * nodemailer reports recipients with the domain lower-cased (and in punycode); the result names each as the
 * envelope did, so a caller can match it with what it sent.
 */
function asWritten(recipients: string[]): (address: string) => string {
  const key = (a: string) => {
    const at = a.lastIndexOf('@');
    return `${a.slice(0, at)}@${a.slice(at + 1).toLowerCase()}`;
  };
  const written = new Map(recipients.map((r) => [key(r), r]));
  return (address) => written.get(key(address)) ?? address;
}

const named = (found: FailedRecipient[], original: (a: string) => string): FailedRecipient[] =>
  found.map((f) => ({ ...f, address: original(f.address) }));

async function sendOnce(pools: SitePools, send: PooledSend, message: BuiltMessage): Promise<Sent> {
  try {
    return { result: await pools.send(send, message) };
  } catch (err) {
    return { err };
  }
}

/** The recipients of `recipients` that `named` leaves out get `failure`: each one answered for. */
function allAnswered(recipients: string[], named: FailedRecipient[], failure: SmtpFailure): FailedRecipient[] {
  const answered = new Set(named.map((n) => n.address));
  return [...named, ...recipients.filter((r) => !answered.has(r)).map((address) => ({ address, failure }))];
}

/** Sorts a failed transaction: settled for its recipients, or a reason to try the next host. */
export function judgeFailure(err: unknown, recipients: string[]): Attempt {
  const failure = classifySmtpError(err);
  // Every recipient refused at RCPT, each with its own reply: those replies are the verdict.
  const refused = named(
    rejectedRecipients(err as { rejected?: unknown[]; rejectedErrors?: unknown[] }),
    asWritten(recipients),
  );
  if (refused.length > 0)
    return { done: true, accepted: [], failed: allAnswered(recipients, refused, failure), reply: failure, ok: false };
  const command = (err as { command?: string }).command ?? '';
  // A permanent refusal of the message itself (MAIL FROM, DATA): every MX of a domain shares one policy.
  if (failure.kind === 'hard' && !SESSION_COMMANDS.has(command)) {
    return {
      done: true,
      accepted: [],
      failed: recipients.map((address) => ({ address, failure })),
      reply: failure,
      ok: false,
    };
  }
  return { done: false, failure };
}

/**
 * One SMTP transaction for `recipients` (all of one domain) at one MX address, over a connection of the site's
 * pool. Opportunistically, a TLS handshake that fails is retried once in plain text (RFC 7435: opportunistic
 * encryption never blocks delivery); with verified TLS required (MTA-STS enforce), it is a 4.7.5 deferral
 * from this host and the next is tried.
 */
export async function attemptTarget(
  pools: SitePools,
  send: PooledSend & { domain: string },
  message: BuiltMessage,
  recipients: string[],
): Promise<Attempt> {
  const envelope = { ...message.envelope, to: recipients };
  const transaction = { ...message, envelope };
  const pooled: PooledSend = { site: send.site, target: send.target, source: send.source, tls: send.tls };
  let sent = await sendOnce(pools, pooled, transaction);
  if ('err' in sent && sent.err instanceof SiteQueueFull) {
    const diagnostic = sent.err.message;
    return { done: false, failure: { kind: 'soft', code: 0, status: '4.4.5', diagnostic, held: true } };
  }
  if ('err' in sent && send.tls === 'verified' && tlsRefused(sent.err)) {
    const why = `${send.target.exchange}: no verified TLS (${(sent.err as Error).message})`;
    return { done: false, failure: mtaStsFailure(send.domain, why) };
  }
  if ('err' in sent && isTlsFailure(sent.err)) {
    pools.usePlaintext(send.target, send.source);
    sent = await sendOnce(pools, pooled, transaction);
  }
  if ('err' in sent) return judgeFailure(sent.err, recipients);
  const { info, tls } = sent.result;
  const original = asWritten(recipients);
  const response = String(info.response);
  const accepted = info.accepted.map((a) => ({
    address: original(String(a)),
    response,
    mx: send.target.exchange,
    tls,
  }));
  return {
    done: true,
    accepted,
    failed: named(rejectedRecipients(info as { rejected?: unknown[]; rejectedErrors?: unknown[] }), original),
    reply: {
      code: Number(response.slice(0, 3)) || 0,
      status: /\b2\.\d{1,3}\.\d{1,3}\b/.exec(response)?.[0] ?? '',
      diagnostic: response,
    },
    ok: true,
  };
}

/** OpenSSL's and Node's certificate verification failures (DEPTH_ZERO_SELF_SIGNED_CERT, ERR_TLS_CERT_ALTNAME_INVALID...). */
const CERTIFICATE_FAILURE = /CERT|SELF_SIGNED|UNABLE_TO_|^ERR_TLS_/;

/**
 * A connection that could not be secured as required: the handshake failed, the certificate did not verify
 * for the MX name, or STARTTLS was refused or not offered. nodemailer keeps the socket's own code as
 * `originalCode` (a self-signed certificate arrives as a socket error, not as ETLS).
 */
function tlsRefused(err: unknown): boolean {
  const e = err as { command?: string; code?: string; originalCode?: string };
  return isTlsFailure(err) || e.command === 'STARTTLS' || CERTIFICATE_FAILURE.test(e.originalCode ?? e.code ?? '');
}
