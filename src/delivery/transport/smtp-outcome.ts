import { refusalClass } from '../../domain/bounce-class.js';

/**
 * Every SMTP result sorted once (as postal's smtp_sender does): a permanent refusal (5xx) is a bounce and
 * is never retried; a temporary refusal (4xx), a connection failure or a timeout is retried later. A 5xx
 * that receivers mean as temporary (a full mailbox: 552 5.2.2, "over quota"; see domain/bounce-class.ts) is
 * retried as a 4xx is.
 */
export type SmtpFailure = {
  kind: 'hard' | 'soft';
  /** The SMTP reply code, 0 when the server never answered. */
  code: number;
  /** Enhanced status code (RFC 3463), e.g. 5.1.1, when the server gave one. */
  status: string;
  diagnostic: string;
  /**
   * Nothing was tried: the service's own queue for the destination site was full (egress shaping). The room
   * comes back within seconds, as the site's sends finish: the attempt is made again then, not on the retry
   * schedule (delivery-activities.ts).
   */
  held?: true;
};

const ENHANCED = /\b([245]\.\d{1,3}\.\d{1,3})\b/;

/** Nodemailer error codes that say the message itself can never be sent as it is. */
const PERMANENT_CODES = new Set(['EMESSAGE', 'EMAXRECIPIENTS', 'EFILEACCESS', 'EURLACCESS', 'ESTREAM']);

export function classifySmtpError(err: unknown): SmtpFailure {
  const e = err as { responseCode?: number; response?: string; code?: string; message?: string };
  const code = typeof e.responseCode === 'number' ? e.responseCode : 0;
  const diagnostic = (e.response ?? e.message ?? String(err)).slice(0, 1000);
  const status = ENHANCED.exec(diagnostic)?.[1] ?? (code >= 500 ? '5.0.0' : code >= 400 ? '4.0.0' : '');
  if (code >= 500 && code < 600)
    return { kind: refusalClass(status, diagnostic) === 'retry' ? 'soft' : 'hard', code, status, diagnostic };
  if (code >= 400 && code < 500) return { kind: 'soft', code, status, diagnostic };
  if (e.code !== undefined && PERMANENT_CODES.has(e.code))
    return { kind: 'hard', code, status: status || '5.6.0', diagnostic };
  return { kind: 'soft', code, status: status || '4.4.1', diagnostic };
}

/** The per-recipient refusals nodemailer reports when the server accepted some recipients but not all. */
export function rejectedRecipients(info: {
  rejected?: unknown[];
  rejectedErrors?: unknown[];
}): { address: string; failure: SmtpFailure }[] {
  const errors = (info.rejectedErrors ?? []) as { recipient?: string }[];
  return (info.rejected ?? []).map((r, i) => ({
    address: String(typeof r === 'string' ? r : ((r as { address?: string }).address ?? r)),
    failure: classifySmtpError(errors[i] ?? { responseCode: 550, response: '550 recipient rejected' }),
  }));
}
