import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Fields every log line written within a piece of work carries: `reqId` while serving a request, `smtpSession`
 * while serving an SMTP connection (submission, inbound reports), `emailId` while delivering an email,
 * `webhookDeliveryId` while posting a webhook.
 *
 * Why an async context rather than only child loggers: the services, repositories and transports a request
 * or a delivery goes through get their logger once, at start; a child logger would have to be threaded
 * through every call to reach their lines. The logger's mixin (logger.ts) reads these fields instead, so a
 * warning logged deep inside (a usage write, an MX host failing) says which request or email it was for.
 */
export interface LogFields {
  reqId?: string;
  smtpSession?: string;
  emailId?: string;
  webhookDeliveryId?: string;
  /** The inbound email an `inbound` event is about, while posting its webhook. */
  inboundId?: string;
}

const storage = new AsyncLocalStorage<LogFields>();

/** Runs `fn` with `fields` added to those of the enclosing work. */
export function withLogFields<T>(fields: LogFields, fn: () => T): T {
  const outer = storage.getStore();
  return storage.run(outer ? { ...outer, ...fields } : fields, fn);
}

/** The fields of the work in progress; undefined outside any. */
export function currentLogFields(): LogFields | undefined {
  return storage.getStore();
}
