/**
 * The management API (/v1/mail/admin), one function per endpoint. JSON field names are the API's
 * (daily_quota, sent_today, ...). Failures throw ApiError with the API's `{error, message}`.
 */
import { session } from './session.js';

const BASE = '/v1/mail/admin';

export class ApiError extends Error {
  constructor(status, error, message) {
    super(message || error || `HTTP ${status}`);
    this.status = status;
    this.error = error;
  }
}

/** Called when the API refuses the stored token (401), so the app can send the operator back to sign in. */
let onUnauthorized = () => {};
export function setUnauthorizedHandler(fn) {
  onUnauthorized = fn;
}

/**
 * One call. `body` goes as JSON; `csv` (text) as the body itself, text/csv. With `asText` the answer's text is
 * answered as it came (a CSV export) instead of being read as JSON, with `asBlob` its bytes as a Blob of the
 * answer's content type (a download); a failure is read as JSON either way.
 */
async function request(
  method,
  path,
  { query, body, csv, asText = false, asBlob = false, token = session.token() } = {},
) {
  const url = new URL(BASE + path, location.origin);
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(name, String(value));
  }
  const headers = { authorization: `Bearer ${token ?? ''}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (csv !== undefined) headers['content-type'] = 'text/csv';
  let res;
  try {
    res = await fetch(url, { method, headers, body: csv ?? (body === undefined ? undefined : JSON.stringify(body)) });
  } catch {
    throw new ApiError(0, 'network error', 'The service did not answer. Is it running?');
  }
  if (asBlob && res.ok) return res.blob();
  const text = await res.text();
  if (asText && res.ok) return text;
  let json;
  try {
    json = text === '' ? {} : JSON.parse(text);
  } catch {
    json = { error: `HTTP ${res.status}`, message: text.slice(0, 200) };
  }
  if (!res.ok) {
    const err = new ApiError(res.status, json.error, json.message);
    if (res.status === 401 && token === session.token()) onUnauthorized(err);
    throw err;
  }
  return json;
}

const id = (value) => encodeURIComponent(value);

/** Checks a token without storing it: the sign-in page's question "is this the admin token?". */
export const checkToken = (token) => request('GET', '/accounts', { token });

export const listAccounts = () => request('GET', '/accounts');
export const createAccount = (name) => request('POST', '/accounts', { body: { name } });
export const getAccount = (accountId) => request('GET', `/accounts/${id(accountId)}`);
/** changes: {status?, daily_quota?} */
export const updateAccount = (accountId, changes) => request('PATCH', `/accounts/${id(accountId)}`, { body: changes });
export const getAccountStats = (accountId, days) =>
  request('GET', `/accounts/${id(accountId)}/stats`, { query: { days } });
/**
 * CONTRACT.md "Stats and timelines": counts of recipients per day, sender domain, recipient domain, tag or stream.
 * query: {from?, to? (ISO 8601), group_by?: 'day' | 'domain' | 'recipient_domain' | 'tag' | 'stream'}; answers {stats}.
 */
export const getStats = (accountId, query) => request('GET', `/accounts/${id(accountId)}/stats/grouped`, { query });

export const listDomains = (accountId) => request('GET', `/accounts/${id(accountId)}/domains`);
export const createDomain = (accountId, name) =>
  request('POST', `/accounts/${id(accountId)}/domains`, { body: { name } });
export const verifyDomain = (domainId, force) =>
  request('POST', `/domains/${id(domainId)}/verify`, { body: { force } });
/** A new DKIM key to publish; it signs once its record is found (409 while one is pending). */
export const rotateDomainDkim = (domainId) => request('POST', `/domains/${id(domainId)}/dkim/rotate`, { body: {} });
/** changes: {open_tracking?, click_tracking?} */
export const updateDomain = (domainId, changes) => request('PATCH', `/domains/${id(domainId)}`, { body: changes });

export const listApiKeys = (accountId) => request('GET', `/accounts/${id(accountId)}/api-keys`);
/** key: {name, permission, allowed_domains?} */
export const createApiKey = (accountId, key) => request('POST', `/accounts/${id(accountId)}/api-keys`, { body: key });
export const deleteApiKey = (keyId) => request('DELETE', `/api-keys/${id(keyId)}`);

export const listWebhooks = (accountId) => request('GET', `/accounts/${id(accountId)}/webhooks`);
/** webhook: {url, events} */
export const createWebhook = (accountId, webhook) =>
  request('POST', `/accounts/${id(accountId)}/webhooks`, { body: webhook });
export const deleteWebhook = (webhookId) => request('DELETE', `/webhooks/${id(webhookId)}`);
export const verifyWebhook = (webhookId) => request('POST', `/webhooks/${id(webhookId)}/verify`, { body: {} });
export const enableWebhook = (webhookId) => request('POST', `/webhooks/${id(webhookId)}/enable`, { body: {} });
/** A new signing secret (in the answer only); the old one keeps signing until previous_secret_until (default 24 h). */
export const rotateWebhookSecret = (webhookId) =>
  request('POST', `/webhooks/${id(webhookId)}/rotate-secret`, { body: {} });
/** range: {from, to} (ISO 8601): queues that range's discarded deliveries again; answers {queued, has_more}. */
export const resendWebhookDeliveries = (webhookId, range) =>
  request('POST', `/webhooks/${id(webhookId)}/resend`, { body: range });
export const listWebhookDeliveries = (webhookId, query) =>
  request('GET', `/webhooks/${id(webhookId)}/deliveries`, { query });
export const resendWebhookDelivery = (deliveryId) =>
  request('POST', `/webhook-deliveries/${id(deliveryId)}/resend`, { body: {} });

/** query: {status?, job_type?, job_id?, page?, page_size?} */
export const listEmails = (accountId, query) => request('GET', `/accounts/${id(accountId)}/emails`, { query });
export const getEmail = (emailId) => request('GET', `/emails/${id(emailId)}`);

/** query: {status?, page?, limit?} */
export const listBatchJobs = (accountId, query) => request('GET', `/accounts/${id(accountId)}/batches`, { query });
export const listScheduledEmails = (accountId, query) =>
  request('GET', `/accounts/${id(accountId)}/scheduled`, { query });
export const cancelScheduledEmail = (scheduledId) => request('DELETE', `/scheduled/${id(scheduledId)}`);

/** query: {email?, reason?, scope?, topic?}: answers {suppressions (the newest 1000 that match), total}. */
export const listSuppressions = (accountId, query) =>
  request('GET', `/accounts/${id(accountId)}/suppressions`, { query });
/** suppression: {email, scope?: 'all' | 'broadcast', topic?}: reason manual; one that exists is answered again. */
export const addSuppression = (accountId, suppression) =>
  request('POST', `/accounts/${id(accountId)}/suppressions`, { body: suppression });
/** csv: the file's text (header email[,scope[,topic]]); answers {imported, skipped, errors: [{line, message}]}. */
export const importSuppressions = (accountId, csv) =>
  request('POST', `/accounts/${id(accountId)}/suppressions/import`, { csv });
/** Every suppression of the account, as the CSV text (email,reason,scope,topic,created_at). */
export const exportSuppressions = (accountId) =>
  request('GET', `/accounts/${id(accountId)}/suppressions/export`, { asText: true });
export const deleteSuppression = (suppressionId) => request('DELETE', `/suppressions/${id(suppressionId)}`);

/** query: {page?, page_size?}: answers {templates: [{id, name, alias?, subject, version (the latest), published_version, ...}], total}. */
export const listTemplates = (accountId, query) => request('GET', `/accounts/${id(accountId)}/templates`, { query });
/** template: {name, alias?, subject, html?, text?, variables?, localizations?}: version 1, published. */
export const createTemplate = (accountId, template) =>
  request('POST', `/accounts/${id(accountId)}/templates`, { body: template });
/** By id or alias: the template at its latest version. */
export const getTemplate = (accountId, templateId) =>
  request('GET', `/accounts/${id(accountId)}/templates/${id(templateId)}`);
/** Any field of the create body: a new version; the published version stays until publishTemplate. */
export const updateTemplate = (accountId, templateId, changes) =>
  request('PATCH', `/accounts/${id(accountId)}/templates/${id(templateId)}`, { body: changes });
export const getTemplateVersion = (accountId, templateId, version) =>
  request('GET', `/accounts/${id(accountId)}/templates/${id(templateId)}/versions/${id(version)}`);
/** Makes `version` the one sends use. */
export const publishTemplate = (accountId, templateId, version) =>
  request('POST', `/accounts/${id(accountId)}/templates/${id(templateId)}/publish`, { body: { version } });
export const deleteTemplate = (accountId, templateId) =>
  request('DELETE', `/accounts/${id(accountId)}/templates/${id(templateId)}`);
/**
 * Renders content that is not stored, as a send would: the editor's live preview.
 * content: {subject, html?, text?, variables?, localizations?, sample_variables?, locale?}; answers {subject, html, text}.
 */
export const previewTemplate = (accountId, content) =>
  request('POST', `/accounts/${id(accountId)}/template-preview`, { body: content });

/** query: {page?, page_size?}: answers {routes: [{id, match, created_at}], total}, newest first. */
export const listInboundRoutes = (accountId, query) =>
  request('GET', `/accounts/${id(accountId)}/inbound/routes`, { query });
/** match: `local@domain` or `*@domain` on a verified domain of the account (409 when any account has it). */
export const createInboundRoute = (accountId, match) =>
  request('POST', `/accounts/${id(accountId)}/inbound/routes`, { body: { match } });
export const deleteInboundRoute = (routeId) => request('DELETE', `/inbound/routes/${id(routeId)}`);
/** query: {page?, page_size?}: answers {inbound_emails, total}, newest first. */
export const listInboundEmails = (accountId, query) =>
  request('GET', `/accounts/${id(accountId)}/inbound/emails`, { query });
export const getInboundEmail = (inboundId) => request('GET', `/inbound/emails/${id(inboundId)}`);
/** The message exactly as received (message/rfc822), as a Blob. */
export const getInboundRaw = (inboundId) => request('GET', `/inbound/emails/${id(inboundId)}/raw`, { asBlob: true });
/** Attachment `n` (from 0, in the order of `attachments`) as a Blob of its content type. */
export const getInboundAttachment = (inboundId, n) =>
  request('GET', `/inbound/emails/${id(inboundId)}/attachments/${id(n)}`, { asBlob: true });

export const listCaughtMessages = (limit) => request('GET', '/catcher/messages', { query: { limit } });
export const getCaughtMessage = (messageId) => request('GET', `/catcher/messages/${id(messageId)}`);
