import type { TransportResult } from './transport.js';

const REPLY_CODE = /^([245]\d\d)\b/;

/**
 * What a span of one SMTP hand-over says of it: the server(s) that answered, the reply code and text (the
 * accepting server's, else the first refusal's), and how many recipients were accepted, refused for good
 * and deferred. Addresses are left out: they are personal data, and the email id leads to them.
 */
export function smtpSpanAttributes(result: TransportResult, host: string | undefined): Record<string, string | number> {
  const hosts =
    host !== undefined
      ? [host]
      : [...new Set(result.accepted.map((a) => a.mx).filter((mx): mx is string => mx !== undefined))];
  const failure = (result.refused[0] ?? result.deferred[0])?.failure;
  const reply = result.accepted[0]?.response ?? failure?.diagnostic ?? '';
  const code = Number(REPLY_CODE.exec(reply)?.[1] ?? failure?.code ?? 0);
  return {
    ...(hosts.length > 0 ? { 'server.address': hosts.join(',') } : {}),
    'mailer.smtp.reply_code': code,
    'mailer.smtp.reply': reply.slice(0, 200),
    'mailer.smtp.accepted': result.accepted.length,
    'mailer.smtp.refused': result.refused.length,
    'mailer.smtp.deferred': result.deferred.length,
  };
}
