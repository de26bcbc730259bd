/**
 * @mailer/sdk: the mailer service's TypeScript SDK. `new Mailer({ apiKey, baseUrl })`; every input and output is
 * a message type generated from the service's proto (re-exported below with their schemas).
 */
export { Mailer, type MailerOptions } from './client.js';
export { MailerError } from './errors.js';
export type { RetryOptions } from './retry.js';
export type { RequestOptions } from './transport.js';
export {
  Webhooks,
  WebhookVerificationError,
  verify as verifyWebhook,
  type VerifyOptions,
  type WebhookHeaders,
} from './webhooks.js';
export type { SendEmailInput, ScheduleEmailInput, ListEmailsInput } from './resources/emails.js';
export type { ListEventsInput, IterateOptions } from './resources/events.js';
export * from './gen/mail/v1/types_pb.js';
export * from './gen/mail/v1/email_service_pb.js';
export * from './gen/mail/v1/templates_pb.js';
export * from './gen/mail/v1/suppressions_pb.js';
export * from './gen/mail/v1/inbound_pb.js';
export * from './gen/mail/v1/account_pb.js';
