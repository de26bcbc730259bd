import { BytesInFlightError } from '../bytes-in-flight.js';
import { toAppError, type ErrorKind } from '../errors.js';

/** An error smtp-server answers with: `responseCode` and a message that starts with the enhanced code. */
export type SmtpReplyError = Error & { responseCode: number };

export const smtpReply = (code: number, text: string): SmtpReplyError =>
  Object.assign(new Error(text), { responseCode: code });

/**
 * How the submission listener answers each kind of AppError: the SMTP twin of errors.ts's ERROR_TABLE, the
 * one place that decides it. What a client may retry (ERROR_TABLE's `retryable`) is a 4xx, so a mail client
 * queues the message and tries again; everything else is a 5xx, which it reports to its user.
 * Kinds that only HTTP framing produces cannot happen here; they still get an answer of their class.
 * test/unit/smtp-replies.test.ts fails when a kind's class disagrees with ERROR_TABLE's `retryable`.
 */
const SMTP_TABLE: Record<ErrorKind, { code: number; enhanced: string }> = {
  validation: { code: 550, enhanced: '5.6.0' },
  unauthorized: { code: 535, enhanced: '5.7.8' },
  permission_denied: { code: 550, enhanced: '5.7.1' },
  not_found: { code: 550, enhanced: '5.5.0' },
  method_not_allowed: { code: 502, enhanced: '5.5.1' },
  conflict: { code: 451, enhanced: '4.3.0' },
  payload_too_large: { code: 552, enhanced: '5.3.4' },
  uri_too_long: { code: 550, enhanced: '5.6.0' },
  unsupported_media_type: { code: 550, enhanced: '5.6.0' },
  headers_too_large: { code: 552, enhanced: '5.3.4' },
  rate_limited: { code: 451, enhanced: '4.7.0' },
  // The transient twin of the 5.4.5 large providers answer for a daily sending quota.
  quota_exceeded: { code: 452, enhanced: '4.4.5' },
  unavailable: { code: 451, enhanced: '4.3.0' },
  internal: { code: 451, enhanced: '4.3.0' },
};

/** The SMTP answer to any thrown value (unknown failures are `internal`, whose message leaks nothing). */
export function smtpReplyFor(err: unknown): SmtpReplyError {
  const app = toAppError(err);
  // Not the key's request rate but the bytes the process holds: RFC 5321's 452 for storage, retried later.
  const { code, enhanced } =
    app instanceof BytesInFlightError ? { code: 452, enhanced: '4.3.1' } : SMTP_TABLE[app.kind];
  const retry = app.retryAfterSeconds !== undefined && code < 500 ? ` (retry in ${app.retryAfterSeconds} s)` : '';
  return smtpReply(code, `${enhanced} ${app.message}${retry}`);
}
