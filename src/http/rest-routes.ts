import type { DescMethod } from '@bufbuild/protobuf';
import { AdminService } from '../gen/mail/v1/admin_service_pb.js';
import { EmailService } from '../gen/mail/v1/email_service_pb.js';
import { BODY_LIMITS } from '../domain/limits.js';
import type { AdminSuppressionStreams } from '../api/admin-suppressions-api.js';
import type { SuppressionStreams } from '../api/suppressions-api.js';

/**
 * The REST shape of the schema: each spec path mapped to its RPC. The gateway, the OpenAPI document and
 * the tests all read this one table.
 */
export interface RestRoute {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Fastify path under the API's base; path parameters are named `:id`. */
  path: string;
  rpc: DescMethod;
  /** The request field the `:id` path parameter fills. */
  idField?: string;
  /**
   * Further path parameters: `:name` to the request field it fills, a dotted path when that field is in the
   * body's message (`template.id`).
   */
  params?: Record<string, string>;
  /** The request field the JSON body fills (google.api.http's `body: "field"`); absent: the whole request. */
  bodyField?: string;
  bodyLimit?: number;
  /**
   * CSV instead of the RPC's JSON (the suppression import and export, registered by csv-routes.ts): `body` names
   * the request field a text/csv body fills; `stream` the handler (api/suppressions-api.ts SuppressionStreams,
   * admin-suppressions-api.ts AdminSuppressionStreams) whose text/csv answer is streamed, where the RPC answers
   * it in one message over gRPC.
   */
  csv?: { body?: string; stream?: keyof (SuppressionStreams & AdminSuppressionStreams) };
  /**
   * Stored bytes instead of JSON (an inbound message's raw form, its attachments: bytes-routes.ts): the RPC is
   * server-streaming, and its chunks' bytes are the answer's body. `contentType`: what the OpenAPI document
   * says the answer is (`*` + `/*` when it is the stored content's own).
   */
  bytes?: { contentType: string };
  summary: string;
}

const e = EmailService.method;
const a = AdminService.method;

export const API_BASE = '/v1/mail';
export const ADMIN_BASE = '/v1/mail/admin';

export const EMAIL_ROUTES: RestRoute[] = [
  {
    method: 'POST',
    path: '/emails',
    rpc: e.sendEmail,
    bodyLimit: BODY_LIMITS.singleSend,
    summary: 'Send one email now',
  },
  {
    method: 'POST',
    path: '/emails/schedule',
    rpc: e.scheduleEmail,
    bodyLimit: BODY_LIMITS.singleSend,
    summary: 'Schedule one email',
  },
  { method: 'GET', path: '/emails/scheduled', rpc: e.listScheduledEmails, summary: 'List scheduled emails' },
  {
    method: 'GET',
    path: '/emails/scheduled/:id',
    rpc: e.getScheduledEmail,
    idField: 'id',
    summary: 'Get one scheduled email',
  },
  {
    method: 'DELETE',
    path: '/emails/scheduled/:id',
    rpc: e.cancelScheduledEmail,
    idField: 'id',
    summary: 'Cancel a scheduled email',
  },
  { method: 'POST', path: '/emails/batch', rpc: e.sendBatch, bodyLimit: BODY_LIMITS.batch, summary: 'Send a batch' },
  { method: 'GET', path: '/emails/batch', rpc: e.listBatchJobs, summary: 'List batch jobs' },
  { method: 'GET', path: '/emails/batch/:id', rpc: e.getBatchJob, idField: 'id', summary: 'Get one batch job' },
  { method: 'GET', path: '/emails', rpc: e.listEmails, summary: 'List emails' },
  { method: 'GET', path: '/emails/:id', rpc: e.getEmail, idField: 'id', summary: 'Get one email' },
  {
    method: 'GET',
    path: '/events',
    rpc: e.listEvents,
    summary:
      "The account's events oldest first, as webhooks send them, from a cursor: poll with next_cursor to read each once",
  },
];

/** CONTRACT.md "Templates": under the public API's base, with an API key. */
export const TEMPLATE_ROUTES: RestRoute[] = [
  {
    method: 'POST',
    path: '/templates',
    rpc: e.createTemplate,
    bodyLimit: BODY_LIMITS.template,
    summary: 'Create a template (version 1, published)',
  },
  { method: 'GET', path: '/templates', rpc: e.listTemplates, summary: 'List templates, newest first' },
  {
    method: 'GET',
    path: '/templates/:id',
    rpc: e.getTemplate,
    idField: 'id',
    summary: 'Get a template (its latest version) by id or alias',
  },
  {
    method: 'PATCH',
    path: '/templates/:id',
    rpc: e.updateTemplate,
    idField: 'id',
    bodyLimit: BODY_LIMITS.template,
    summary: 'Edit a template: a new version; sends keep the published one until it is published',
  },
  {
    method: 'GET',
    path: '/templates/:id/versions/:version',
    rpc: e.getTemplateVersion,
    idField: 'id',
    params: { version: 'version' },
    summary: 'Get one version of a template',
  },
  {
    method: 'POST',
    path: '/templates/:id/publish',
    rpc: e.publishTemplate,
    idField: 'id',
    summary: 'Make a version (default: the latest) the one sends use',
  },
  {
    method: 'DELETE',
    path: '/templates/:id',
    rpc: e.deleteTemplate,
    idField: 'id',
    summary: 'Delete a template; later sends naming it are refused',
  },
  {
    method: 'POST',
    path: '/templates/:id/render',
    rpc: e.renderTemplate,
    idField: 'id',
    bodyLimit: BODY_LIMITS.singleSend,
    summary: 'Render the published version (or a given one) with variables, as a send would',
  },
];

/**
 * An account's templates for the console: the public template routes under `/accounts/:id`, the template named
 * `:template` (its id or alias), the body the public request's.
 */
const ACCOUNT_TEMPLATE_ROUTES: RestRoute[] = [
  {
    method: 'GET',
    path: '/accounts/:id/templates',
    rpc: a.listAccountTemplates,
    idField: 'account_id',
    summary: "List an account's templates, newest first",
  },
  {
    method: 'POST',
    path: '/accounts/:id/templates',
    rpc: a.createAccountTemplate,
    idField: 'account_id',
    bodyField: 'template',
    bodyLimit: BODY_LIMITS.template,
    summary: 'Create a template in an account (version 1, published)',
  },
  {
    method: 'POST',
    path: '/accounts/:id/template-preview',
    rpc: a.previewAccountTemplate,
    idField: 'account_id',
    bodyField: 'preview',
    bodyLimit: BODY_LIMITS.template,
    summary: 'Render content without storing it, as a send would (the editor preview)',
  },
  {
    method: 'GET',
    path: '/accounts/:id/templates/:template',
    rpc: a.getAccountTemplate,
    idField: 'account_id',
    params: { template: 'id' },
    summary: "Get an account's template (its latest version) by id or alias",
  },
  {
    method: 'PATCH',
    path: '/accounts/:id/templates/:template',
    rpc: a.updateAccountTemplate,
    idField: 'account_id',
    params: { template: 'template.id' },
    bodyField: 'template',
    bodyLimit: BODY_LIMITS.template,
    summary: "Edit an account's template: a new version; sends keep the published one",
  },
  {
    method: 'GET',
    path: '/accounts/:id/templates/:template/versions/:version',
    rpc: a.getAccountTemplateVersion,
    idField: 'account_id',
    params: { template: 'id', version: 'version' },
    summary: "Get one version of an account's template",
  },
  {
    method: 'POST',
    path: '/accounts/:id/templates/:template/publish',
    rpc: a.publishAccountTemplate,
    idField: 'account_id',
    params: { template: 'template.id' },
    bodyField: 'template',
    summary: 'Make a version (default: the latest) the one sends use',
  },
  {
    method: 'DELETE',
    path: '/accounts/:id/templates/:template',
    rpc: a.deleteAccountTemplate,
    idField: 'account_id',
    params: { template: 'id' },
    summary: "Delete an account's template",
  },
  {
    method: 'POST',
    path: '/accounts/:id/templates/:template/render',
    rpc: a.renderAccountTemplate,
    idField: 'account_id',
    params: { template: 'template.id' },
    bodyField: 'template',
    bodyLimit: BODY_LIMITS.singleSend,
    summary: "Render an account's template (published, or a given version) with variables",
  },
];

/** CONTRACT.md "Streams, one-click unsubscribe and suppressions": the account's own suppression list. */
export const SUPPRESSION_ROUTES: RestRoute[] = [
  {
    method: 'GET',
    path: '/suppressions',
    rpc: e.searchSuppressions,
    summary: 'List suppressions, newest first, by address, reason, scope or topic',
  },
  {
    method: 'POST',
    path: '/suppressions',
    rpc: e.addSuppression,
    summary: 'Suppress an address (reason manual): all its mail, or its broadcast mail (of one topic, or all)',
  },
  {
    method: 'POST',
    path: '/suppressions/import',
    rpc: e.importSuppressions,
    csv: { body: 'csv' },
    bodyLimit: BODY_LIMITS.suppressionImport,
    summary: 'Import suppressions from CSV (email[,scope[,topic]], up to 100,000 rows); bad rows listed by line',
  },
  {
    method: 'GET',
    path: '/suppressions/export',
    rpc: e.exportSuppressions,
    csv: { stream: 'streamSuppressionsCsv' },
    summary: 'Every suppression of the account as CSV (email,reason,scope,topic,created_at), streamed',
  },
  {
    method: 'DELETE',
    path: '/suppressions/:id',
    rpc: e.removeSuppression,
    idField: 'email',
    summary: "Remove an address's suppression of scope (and topic), or all of them when no scope is given",
  },
];

/** CONTRACT.md "Inbound mail": the addresses of the account's domains it receives mail at. */
export const INBOUND_ROUTE_ROUTES: RestRoute[] = [
  {
    method: 'POST',
    path: '/inbound/routes',
    rpc: e.createInboundRoute,
    summary: 'Receive mail at local@domain or *@domain, on a verified domain of the account or a subdomain of one',
  },
  { method: 'GET', path: '/inbound/routes', rpc: e.listInboundRoutes, summary: 'List inbound routes, newest first' },
  {
    method: 'DELETE',
    path: '/inbound/routes/:id',
    rpc: e.deleteInboundRoute,
    idField: 'id',
    summary: 'Delete an inbound route: its address takes no more mail (mail it received stays)',
  },
];

/** An account's inbound routes for the console: the public routes under `/accounts/:id`; the delete by route id. */
const ACCOUNT_INBOUND_ROUTE_ROUTES: RestRoute[] = [
  {
    method: 'POST',
    path: '/accounts/:id/inbound/routes',
    rpc: a.createAccountInboundRoute,
    idField: 'account_id',
    summary: 'Add an inbound route to an account, as its POST /inbound/routes',
  },
  {
    method: 'GET',
    path: '/accounts/:id/inbound/routes',
    rpc: a.listAccountInboundRoutes,
    idField: 'account_id',
    summary: "List an account's inbound routes, newest first",
  },
  {
    method: 'DELETE',
    path: '/inbound/routes/:id',
    rpc: a.deleteAccountInboundRoute,
    idField: 'id',
    summary: "Delete any account's inbound route",
  },
];

/** CONTRACT.md "Inbound mail": the mail the account's routes received, and its stored bytes. */
export const INBOUND_EMAIL_ROUTES: RestRoute[] = [
  { method: 'GET', path: '/inbound/emails', rpc: e.listInboundEmails, summary: 'List inbound emails, newest first' },
  {
    method: 'GET',
    path: '/inbound/emails/:id',
    rpc: e.getInboundEmail,
    idField: 'id',
    summary: 'Get one inbound email, as parsed when it arrived',
  },
  {
    method: 'GET',
    path: '/inbound/emails/:id/raw',
    rpc: e.getInboundRaw,
    idField: 'id',
    bytes: { contentType: 'message/rfc822' },
    summary: 'The inbound email exactly as received (message/rfc822), streamed, as a download',
  },
  {
    method: 'GET',
    path: '/inbound/emails/:id/attachments/:n',
    rpc: e.getInboundAttachment,
    idField: 'id',
    params: { n: 'n' },
    bytes: { contentType: '*/*' },
    summary:
      'Attachment n (from 0) of an inbound email: its bytes, as a download; a type a browser would render as a page or script is answered as application/octet-stream',
  },
];

/** An account's inbound mail for the console: the list under `/accounts/:id`, a message by its id. */
const ACCOUNT_INBOUND_EMAIL_ROUTES: RestRoute[] = [
  {
    method: 'GET',
    path: '/accounts/:id/inbound/emails',
    rpc: a.listAccountInboundEmails,
    idField: 'account_id',
    summary: "List an account's inbound emails, newest first",
  },
  {
    method: 'GET',
    path: '/inbound/emails/:id',
    rpc: a.getAccountInboundEmail,
    idField: 'id',
    summary: "Get any account's inbound email",
  },
  {
    method: 'GET',
    path: '/inbound/emails/:id/raw',
    rpc: a.getAccountInboundRaw,
    idField: 'id',
    bytes: { contentType: 'message/rfc822' },
    summary: 'An inbound email exactly as received (message/rfc822), streamed, as a download',
  },
  {
    method: 'GET',
    path: '/inbound/emails/:id/attachments/:n',
    rpc: a.getAccountInboundAttachment,
    idField: 'id',
    params: { n: 'n' },
    bytes: { contentType: '*/*' },
    summary: 'Attachment n (from 0) of an inbound email, as its GET /inbound/emails/:id/attachments/:n',
  },
];

/**
 * CONTRACT.md "Self-service": the account, its domains and webhooks, with the account's own key: reads with a key
 * of permission `all` or `read_only` (the account itself with any), changes with `all`.
 */
export const SELF_SERVICE_ROUTES: RestRoute[] = [
  {
    method: 'GET',
    path: '/account',
    rpc: e.getAccount,
    summary: "The key's account with today's usage and rates (any permission)",
  },
  {
    method: 'POST',
    path: '/domains',
    rpc: e.createDomain,
    summary: 'Add a sender domain: the answer lists the DNS records to publish',
  },
  { method: 'GET', path: '/domains', rpc: e.listDomains, summary: "List the account's domains, oldest first" },
  {
    method: 'GET',
    path: '/domains/:id',
    rpc: e.getDomain,
    idField: 'id',
    summary: 'Get a domain with its DNS records and their status at the last check',
  },
  {
    method: 'DELETE',
    path: '/domains/:id',
    rpc: e.deleteDomain,
    idField: 'id',
    summary:
      'Delete a domain with its DKIM keys and inbound routes; scheduled emails from it are cancelled, emails already sent stay',
  },
  {
    method: 'PATCH',
    path: '/domains/:id',
    rpc: e.updateDomain,
    idField: 'id',
    summary: 'Turn open and click tracking on or off',
  },
  {
    method: 'POST',
    path: '/domains/:id/verify',
    rpc: e.verifyDomain,
    idField: 'id',
    summary: "Check a domain's DNS records now; verified when ownership, SPF and DKIM check out (force is 403 here)",
  },
  {
    method: 'POST',
    path: '/domains/:id/dkim/rotate',
    rpc: e.rotateDomainDkim,
    idField: 'id',
    summary:
      'Start a DKIM key rotation: a new key to publish, signing once its record is found (409 while one is pending)',
  },
  {
    method: 'POST',
    path: '/webhooks',
    rpc: e.createWebhook,
    summary: 'Create a webhook (its signing secret is shown in this answer only)',
  },
  { method: 'GET', path: '/webhooks', rpc: e.listWebhooks, summary: "List the account's webhooks, oldest first" },
  { method: 'DELETE', path: '/webhooks/:id', rpc: e.deleteWebhook, idField: 'id', summary: 'Delete a webhook' },
  {
    method: 'POST',
    path: '/webhooks/:id/verify',
    rpc: e.verifyWebhook,
    idField: 'id',
    summary: 'Send a signed test request (X-Mail-Event: test) and answer the status the receiver gave',
  },
  {
    method: 'POST',
    path: '/webhooks/:id/rotate-secret',
    rpc: e.rotateWebhookSecret,
    idField: 'id',
    summary:
      'Make a new signing secret (shown once); the old one also signs during the overlap (overlap_seconds, default 24 h)',
  },
  {
    method: 'POST',
    path: '/webhooks/:id/enable',
    rpc: e.enableWebhook,
    idField: 'id',
    summary: 'Attempt deliveries again after the webhook was disabled',
  },
  {
    method: 'POST',
    path: '/webhooks/:id/resend',
    rpc: e.resendWebhookDeliveries,
    idField: 'id',
    summary: 'Send the discarded deliveries of a time range again (at most 1000 per call)',
  },
  {
    method: 'GET',
    path: '/webhooks/:id/deliveries',
    rpc: e.listWebhookDeliveries,
    idField: 'id',
    summary: 'Events sent to a webhook, newest first, with every attempt',
  },
  {
    method: 'POST',
    path: '/webhook-deliveries/:id/resend',
    rpc: e.resendWebhookDelivery,
    idField: 'id',
    summary: 'Send an event to its webhook again',
  },
];

/** CONTRACT.md "Self-service": the account's API keys. */
export const API_KEY_ROUTES: RestRoute[] = [
  {
    method: 'POST',
    path: '/api-keys',
    rpc: e.createApiKey,
    summary: 'Create an API key of the account, with its own rate limit, daily quota and expiry if given (shown once)',
  },
  {
    method: 'GET',
    path: '/api-keys',
    rpc: e.listApiKeys,
    summary: "List the account's API keys with their limits and usage (never a key)",
  },
  {
    method: 'DELETE',
    path: '/api-keys/:id',
    rpc: e.deleteApiKey,
    idField: 'id',
    summary: "Delete an API key of the account (the caller's own included): it is refused from the next request on",
  },
];

/** CONTRACT.md "Stats and timelines": GET /stats. */
export const STATS_ROUTES: RestRoute[] = [
  {
    method: 'GET',
    path: '/stats',
    rpc: e.getStats,
    summary:
      'Recipients of the emails accepted in a range of UTC days, by day, sender domain, recipient domain, tag or stream',
  },
];

/** CONTRACT.md "Stats and timelines": one email's events; and the console's template preview. */
export const TIMELINE_ROUTES: RestRoute[] = [
  {
    method: 'GET',
    path: '/emails/:id/events',
    rpc: e.listEmailEvents,
    idField: 'id',
    summary: "One email's events, oldest first, each exactly as GET /events shows it",
  },
  {
    method: 'POST',
    path: '/template-preview',
    rpc: e.previewTemplate,
    bodyLimit: BODY_LIMITS.template,
    summary: 'Render content without storing it, as a send would (the template editor preview)',
  },
];

/** The management API's mirrors of the self-service additions (a domain by id, grouped stats). */
const ACCOUNT_SELF_SERVICE_ROUTES: RestRoute[] = [
  { method: 'GET', path: '/domains/:id', rpc: a.getDomain, idField: 'id', summary: "Get any account's domain" },
  {
    method: 'DELETE',
    path: '/domains/:id',
    rpc: a.deleteDomain,
    idField: 'id',
    summary:
      "Delete any account's domain with its DKIM keys and inbound routes; the account's scheduled emails from it are cancelled, emails already sent stay",
  },
  {
    method: 'GET',
    path: '/accounts/:id/stats/grouped',
    rpc: a.getAccountGroupedStats,
    idField: 'account_id',
    summary: "An account's stats as its GET /stats answers them",
  },
];

/** Egress shaping in direct delivery (docs/deliverability.md "Egress shaping"): the operator's view and control. */
export const EGRESS_ROUTES: RestRoute[] = [
  {
    method: 'GET',
    path: '/egress',
    rpc: a.getEgressStatus,
    summary:
      "Egress shaping: the rules file read (and its error), every destination site's shape and state (rate, throttle, suspensions, connections, last replies), the source-address pools with today's warm-up use",
  },
  {
    method: 'DELETE',
    path: '/egress/sites/:site/suspension',
    rpc: a.resumeEgressSite,
    params: { site: 'site' },
    summary: "End a site's suspension, throttle and source suspensions now (every worker sees it within seconds)",
  },
];

/** Every route of the public API (an API key). */
export const PUBLIC_ROUTES: RestRoute[] = [
  ...EMAIL_ROUTES,
  ...TEMPLATE_ROUTES,
  ...SUPPRESSION_ROUTES,
  ...INBOUND_ROUTE_ROUTES,
  ...INBOUND_EMAIL_ROUTES,
  ...SELF_SERVICE_ROUTES,
  ...API_KEY_ROUTES,
  ...STATS_ROUTES,
  ...TIMELINE_ROUTES,
];

export const ADMIN_ROUTES: RestRoute[] = [
  { method: 'GET', path: '/accounts', rpc: a.listAccounts, summary: 'List accounts' },
  { method: 'POST', path: '/accounts', rpc: a.createAccount, summary: 'Create an account' },
  {
    method: 'GET',
    path: '/accounts/:id',
    rpc: a.getAccount,
    idField: 'id',
    summary: "Get an account with today's usage and rates",
  },
  {
    method: 'PATCH',
    path: '/accounts/:id',
    rpc: a.updateAccount,
    idField: 'id',
    summary: "Set an account's status or quota",
  },
  {
    method: 'POST',
    path: '/accounts/:id/domains',
    rpc: a.createDomain,
    idField: 'account_id',
    summary: 'Add a sender domain',
  },
  {
    method: 'GET',
    path: '/accounts/:id/domains',
    rpc: a.listDomains,
    idField: 'account_id',
    summary: "List an account's domains",
  },
  {
    method: 'POST',
    path: '/domains/:id/verify',
    rpc: a.verifyDomain,
    idField: 'id',
    summary: "Check a domain's DNS records; verified when ownership, SPF and DKIM check out (force: operator override)",
  },
  {
    method: 'POST',
    path: '/domains/:id/dkim/rotate',
    rpc: a.rotateDomainDkim,
    idField: 'id',
    summary:
      'Start a DKIM key rotation: a new key to publish, signing once its record is found (409 while one is pending)',
  },
  {
    method: 'PATCH',
    path: '/domains/:id',
    rpc: a.updateDomain,
    idField: 'id',
    summary: 'Turn open and click tracking on or off',
  },
  {
    method: 'POST',
    path: '/accounts/:id/api-keys',
    rpc: a.createApiKey,
    idField: 'account_id',
    summary: 'Create an API key (shown once)',
  },
  {
    method: 'GET',
    path: '/accounts/:id/api-keys',
    rpc: a.listApiKeys,
    idField: 'account_id',
    summary: 'List API keys with usage',
  },
  { method: 'DELETE', path: '/api-keys/:id', rpc: a.deleteApiKey, idField: 'id', summary: 'Delete an API key' },
  {
    method: 'POST',
    path: '/accounts/:id/webhooks',
    rpc: a.createWebhook,
    idField: 'account_id',
    summary: 'Create a webhook (secret shown once)',
  },
  {
    method: 'GET',
    path: '/accounts/:id/webhooks',
    rpc: a.listWebhooks,
    idField: 'account_id',
    summary: 'List webhooks',
  },
  { method: 'DELETE', path: '/webhooks/:id', rpc: a.deleteWebhook, idField: 'id', summary: 'Delete a webhook' },
  {
    method: 'POST',
    path: '/webhooks/:id/verify',
    rpc: a.verifyWebhook,
    idField: 'id',
    summary: 'Send a signed test request',
  },
  {
    method: 'POST',
    path: '/webhooks/:id/rotate-secret',
    rpc: a.rotateWebhookSecret,
    idField: 'id',
    summary:
      'Make a new signing secret (shown once); the old one also signs during the overlap (overlap_seconds, default 24 h)',
  },
  {
    method: 'POST',
    path: '/webhooks/:id/enable',
    rpc: a.enableWebhook,
    idField: 'id',
    summary: 'Attempt deliveries again after the webhook was disabled',
  },
  {
    method: 'POST',
    path: '/webhooks/:id/resend',
    rpc: a.resendWebhookDeliveries,
    idField: 'id',
    summary: 'Send the discarded deliveries of a time range again (at most 1000 per call)',
  },
  {
    method: 'GET',
    path: '/webhooks/:id/deliveries',
    rpc: a.listWebhookDeliveries,
    idField: 'id',
    summary: 'Events sent to a webhook, with every attempt',
  },
  {
    method: 'POST',
    path: '/webhook-deliveries/:id/resend',
    rpc: a.resendWebhookDelivery,
    idField: 'id',
    summary: 'Send an event to its webhook again',
  },
  {
    method: 'GET',
    path: '/accounts/:id/emails',
    rpc: a.listAccountEmails,
    idField: 'account_id',
    summary: "List an account's emails (the spec's filters)",
  },
  {
    method: 'GET',
    path: '/emails/:id',
    rpc: a.getEmailDetail,
    idField: 'id',
    summary: 'An email with its event timeline',
  },
  {
    method: 'GET',
    path: '/accounts/:id/batches',
    rpc: a.listAccountBatchJobs,
    idField: 'account_id',
    summary: "List an account's batch jobs",
  },
  {
    method: 'GET',
    path: '/accounts/:id/scheduled',
    rpc: a.listAccountScheduledEmails,
    idField: 'account_id',
    summary: "List an account's scheduled emails",
  },
  {
    method: 'DELETE',
    path: '/scheduled/:id',
    rpc: a.cancelScheduledEmail,
    idField: 'id',
    summary: 'Cancel a scheduled email',
  },
  {
    method: 'GET',
    path: '/accounts/:id/stats',
    rpc: a.getAccountStats,
    idField: 'account_id',
    summary: 'Sends and outcomes per day',
  },
  {
    method: 'GET',
    path: '/accounts/:id/suppressions',
    rpc: a.listSuppressions,
    idField: 'account_id',
    summary: "An account's newest 1000 suppressions, by address, reason, scope or topic, and how many match",
  },
  {
    method: 'POST',
    path: '/accounts/:id/suppressions',
    rpc: a.addAccountSuppression,
    idField: 'account_id',
    summary: 'Suppress an address for an account (reason manual), as its POST /suppressions',
  },
  {
    method: 'POST',
    path: '/accounts/:id/suppressions/import',
    rpc: a.importAccountSuppressions,
    idField: 'account_id',
    csv: { body: 'csv' },
    bodyLimit: BODY_LIMITS.suppressionImport,
    summary: "Import an account's suppressions from CSV, as its POST /suppressions/import",
  },
  {
    method: 'GET',
    path: '/accounts/:id/suppressions/export',
    rpc: a.exportAccountSuppressions,
    idField: 'account_id',
    csv: { stream: 'streamAccountSuppressionsCsv' },
    summary: 'Every suppression of an account as CSV (email,reason,scope,topic,created_at), streamed',
  },
  {
    method: 'DELETE',
    path: '/suppressions/:id',
    rpc: a.deleteSuppression,
    idField: 'id',
    summary: 'Remove a suppressed address',
  },
  {
    method: 'POST',
    path: '/emails/:id/erase',
    rpc: a.eraseEmail,
    idField: 'id',
    summary:
      "Erase one email's content (subject, bodies, headers, tags, attachments); it keeps its id, addresses and status (409 while pending)",
  },
  {
    method: 'POST',
    path: '/recipients/erase',
    rpc: a.eraseRecipient,
    summary:
      'Erase every trace of one address, in one account (account_id) or all; a suppression of it stays as a digest, so mail to it is still refused',
  },
  {
    method: 'GET',
    path: '/catcher/messages',
    rpc: a.listCaughtMessages,
    summary: 'Mail received by the built-in catcher',
  },
  {
    method: 'GET',
    path: '/catcher/messages/:id',
    rpc: a.getCaughtMessage,
    idField: 'id',
    summary: 'One caught message, parsed',
  },
  ...ACCOUNT_TEMPLATE_ROUTES,
  ...ACCOUNT_INBOUND_ROUTE_ROUTES,
  ...ACCOUNT_INBOUND_EMAIL_ROUTES,
  ...ACCOUNT_SELF_SERVICE_ROUTES,
  ...EGRESS_ROUTES,
];
