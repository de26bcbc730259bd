import type { SentMessageInfo } from 'nodemailer';
import type { BuiltMessage } from '../send-built.js';
import { classifySmtpError, rejectedRecipients, type SmtpFailure } from '../smtp-outcome.js';
import type { AcceptedRecipient, FailedRecipient } from '../transport.js';
import type { HostPools } from './host-pool.js';
import type { MxTarget } from './mx-route.js';

/** What one transaction ended with: every recipient answered for, or a failure that sends it to the next host. */
export type Attempt =
  { done: true; accepted: AcceptedRecipient[]; failed: FailedRecipient[] } | { done: false; failure: SmtpFailure };

/**
 * Steps before MAIL FROM: a refusal there (a 554 greeting, a 5xx to EHLO) is about this host, not the
 * message, so another MX may well take it (as Postfix's smtp_skip_5xx_greeting).
 */
const SESSION_COMMANDS = new Set(['CONN', 'EHLO', 'HELO', 'LHLO', 'STARTTLS']);

type Sent = { info: SentMessageInfo } | { err: unknown };

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

async function sendOnce(pools: HostPools, target: MxTarget, message: BuiltMessage): Promise<Sent> {
  try {
    return { info: await pools.send(target, message) };
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
  if (refused.length > 0) return { done: true, accepted: [], failed: allAnswered(recipients, refused, failure) };
  const command = (err as { command?: string }).command ?? '';
  // A permanent refusal of the message itself (MAIL FROM, DATA): every MX of a domain shares one policy.
  if (failure.kind === 'hard' && !SESSION_COMMANDS.has(command)) {
    return { done: true, accepted: [], failed: recipients.map((address) => ({ address, failure })) };
  }
  return { done: false, failure };
}

/**
 * One SMTP transaction for `recipients` (all of one domain) at one MX address. A TLS handshake that fails
 * is retried once on a plain-text connection (RFC 7435: opportunistic encryption never blocks delivery).
 */
export async function attemptTarget(
  pools: HostPools,
  target: MxTarget,
  message: BuiltMessage,
  recipients: string[],
): Promise<Attempt> {
  const envelope = { ...message.envelope, to: recipients };
  const transaction = { ...message, envelope };
  let sent = await sendOnce(pools, target, transaction);
  if ('err' in sent && isTlsFailure(sent.err)) {
    pools.usePlaintext(target);
    sent = await sendOnce(pools, target, transaction);
  }
  if ('err' in sent) return judgeFailure(sent.err, recipients);
  const { info } = sent;
  const original = asWritten(recipients);
  const accepted = (info.accepted as unknown[]).map((a) => ({
    address: original(String(a)),
    response: String(info.response),
    mx: target.exchange,
  }));
  return {
    done: true,
    accepted,
    failed: named(rejectedRecipients(info as { rejected?: unknown[]; rejectedErrors?: unknown[] }), original),
  };
}
