/**
 * The console's calls, one function per action. The operator's session calls the management API
 * (/v1/mail/admin, any account named in the path); an account's session calls the public API (/v1/mail) as
 * the key it signed in with, so it sees exactly what that key sees and no other account's ids can reach
 * anything (the accountId arguments are the operator's alone). JSON field names are the API's (daily_quota,
 * sent_today, ...). Failures throw ApiError with the API's `{error, message}`.
 *
 * Every call is authenticated by the session cookie, which the browser sends and no script can read, and carries
 * the session's CSRF token in X-CSRF-Token, which a page of another site cannot know.
 */
import { ApiError, readJson, send, session } from './session.js';

export { ApiError };

const ADMIN = '/v1/mail/admin';
const PUBLIC = '/v1/mail';

/** Called when the service refuses the session (401), so the app can send the user back to sign in. */
let onUnauthorized = () => {};
export function setUnauthorizedHandler(fn) {
  onUnauthorized = fn;
}

/**
 * One call. `body` goes as JSON; `csv` (text) as the body itself, text/csv. With `asText` the answer's text is
 * answered as it came (a CSV export) instead of being read as JSON, with `asBlob` its bytes as a Blob of the
 * answer's content type (a download); a failure is read as JSON either way. `base` is the API's path.
 */
async function request(base, method, path, { query, body, csv, asText = false, asBlob = false } = {}) {
  const url = new URL(base + path, location.origin);
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(name, String(value));
  }
  const headers = { 'x-csrf-token': session.csrfToken() ?? '' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (csv !== undefined) headers['content-type'] = 'text/csv';
  const res = await send(url, {
    method,
    headers,
    body: csv ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  if (asBlob && res.ok) return res.blob();
  if (asText && res.ok) return res.text();
  try {
    return await readJson(res);
  } catch (err) {
    if (err.status === 401) onUnauthorized(err);
    throw err;
  }
}

/** The operator's management API. */
const admin = (method, path, options) => request(ADMIN, method, path, options);
/** The public API, as the account session's key. */
const own = (method, path, options) => request(PUBLIC, method, path, options);
/** A path both APIs answer alike (a webhook, an inbound email by its id): the session's own API. */
const either = (method, path, options) => request(session.isOperator() ? ADMIN : PUBLIC, method, path, options);
/** True in an account's session: its calls go to the public API. */
const mine = () => !session.isOperator();

const id = (value) => encodeURIComponent(value);

export const listAccounts = () => admin('GET', '/accounts');
export const createAccount = (name) => admin('POST', '/accounts', { body: { name } });
/** The account: any account for the operator; an account's session reads its own (GET /account). */
export const getAccount = (accountId) => (mine() ? own('GET', '/account') : admin('GET', `/accounts/${id(accountId)}`));
/** changes: {status?, daily_quota?}: the operator's alone. */
export const updateAccount = (accountId, changes) => admin('PATCH', `/accounts/${id(accountId)}`, { body: changes });
/**
 * {days: [{day, accepted, sent?, delivered, bounced, complained, opened, clicked, unsubscribed}]} for the last
 * `days` UTC days, oldest first, days without mail included. An account's session reads GET /stats by day (which
 * has no `sent`: the chart's table leaves it out).
 */
export async function getAccountStats(accountId, days) {
  if (!mine()) return admin('GET', `/accounts/${id(accountId)}/stats`, { query: { days } });
  const dayMs = 86_400_000;
  const today = Math.floor(Date.now() / dayMs) * dayMs;
  const from = new Date(today - (days - 1) * dayMs);
  const { stats } = await getStats(accountId, { from: from.toISOString(), group_by: 'day' });
  const byDay = new Map(stats.map(({ key, ...counts }) => [key, counts]));
  const empty = { accepted: 0, delivered: 0, bounced: 0, complained: 0, opened: 0, clicked: 0, unsubscribed: 0 };
  return {
    days: Array.from({ length: days }, (_, i) => {
      const day = new Date(from.getTime() + i * dayMs).toISOString().slice(0, 10);
      return { day, ...empty, ...byDay.get(day) };
    }),
  };
}
/**
 * CONTRACT.md "Stats and timelines": counts of recipients per day, sender domain, recipient domain, tag or stream.
 * query: {from?, to? (ISO 8601), group_by?: 'day' | 'domain' | 'recipient_domain' | 'tag' | 'stream'}; answers {stats}.
 */
export const getStats = (accountId, query) =>
  mine() ? own('GET', '/stats', { query }) : admin('GET', `/accounts/${id(accountId)}/stats/grouped`, { query });

export const listDomains = (accountId) =>
  mine() ? own('GET', '/domains') : admin('GET', `/accounts/${id(accountId)}/domains`);
export const createDomain = (accountId, name) =>
  mine()
    ? own('POST', '/domains', { body: { name } })
    : admin('POST', `/accounts/${id(accountId)}/domains`, { body: { name } });
/** `force` (mark verified without a DNS check) is the operator's alone. */
export const verifyDomain = (domainId, force) =>
  either('POST', `/domains/${id(domainId)}/verify`, { body: mine() ? {} : { force } });
/** A new DKIM key to publish; it signs once its record is found (409 while one is pending). */
export const rotateDomainDkim = (domainId) => either('POST', `/domains/${id(domainId)}/dkim/rotate`, { body: {} });
/** changes: {open_tracking?, click_tracking?} */
export const updateDomain = (domainId, changes) => either('PATCH', `/domains/${id(domainId)}`, { body: changes });

export const listApiKeys = (accountId) =>
  mine() ? own('GET', '/api-keys') : admin('GET', `/accounts/${id(accountId)}/api-keys`);
/** key: {name, permission, allowed_domains?} */
export const createApiKey = (accountId, key) =>
  mine()
    ? own('POST', '/api-keys', { body: key })
    : admin('POST', `/accounts/${id(accountId)}/api-keys`, { body: key });
export const deleteApiKey = (keyId) => either('DELETE', `/api-keys/${id(keyId)}`);

export const listWebhooks = (accountId) =>
  mine() ? own('GET', '/webhooks') : admin('GET', `/accounts/${id(accountId)}/webhooks`);
/** webhook: {url, events} */
export const createWebhook = (accountId, webhook) =>
  mine()
    ? own('POST', '/webhooks', { body: webhook })
    : admin('POST', `/accounts/${id(accountId)}/webhooks`, { body: webhook });
export const deleteWebhook = (webhookId) => either('DELETE', `/webhooks/${id(webhookId)}`);
export const verifyWebhook = (webhookId) => either('POST', `/webhooks/${id(webhookId)}/verify`, { body: {} });
export const enableWebhook = (webhookId) => either('POST', `/webhooks/${id(webhookId)}/enable`, { body: {} });
/** A new signing secret (in the answer only); the old one keeps signing until previous_secret_until (default 24 h). */
export const rotateWebhookSecret = (webhookId) =>
  either('POST', `/webhooks/${id(webhookId)}/rotate-secret`, { body: {} });
/** range: {from, to} (ISO 8601): queues that range's discarded deliveries again; answers {queued, has_more}. */
export const resendWebhookDeliveries = (webhookId, range) =>
  either('POST', `/webhooks/${id(webhookId)}/resend`, { body: range });
export const listWebhookDeliveries = (webhookId, query) =>
  either('GET', `/webhooks/${id(webhookId)}/deliveries`, { query });
export const resendWebhookDelivery = (deliveryId) =>
  either('POST', `/webhook-deliveries/${id(deliveryId)}/resend`, { body: {} });

/** query: {status?, job_type?, job_id?, page?, page_size?} */
export const listEmails = (accountId, query) =>
  mine() ? own('GET', '/emails', { query }) : admin('GET', `/accounts/${id(accountId)}/emails`, { query });
/**
 * {email, account_id, events: [{id, type, created_at, data}] oldest first, open_count, click_count}. An account's
 * session reads the email and its events (GET /emails/:id/events, as the events API shows them); the tracking
 * counts with repeats are the operator's.
 */
export async function getEmail(emailId) {
  if (!mine()) return admin('GET', `/emails/${id(emailId)}`);
  const [email, { events }] = await Promise.all([
    own('GET', `/emails/${id(emailId)}`),
    own('GET', `/emails/${id(emailId)}/events`),
  ]);
  return {
    email,
    account_id: session.account().id,
    events: events.map((e) => ({ id: e.id, type: e.event, created_at: e.timestamp, data: e.data })),
    open_count: 0,
    click_count: 0,
  };
}

/** query: {status?, page?, limit?} */
export const listBatchJobs = (accountId, query) =>
  mine() ? own('GET', '/emails/batch', { query }) : admin('GET', `/accounts/${id(accountId)}/batches`, { query });
export const listScheduledEmails = (accountId, query) =>
  mine() ? own('GET', '/emails/scheduled', { query }) : admin('GET', `/accounts/${id(accountId)}/scheduled`, { query });
export const cancelScheduledEmail = (scheduledId) =>
  mine() ? own('DELETE', `/emails/scheduled/${id(scheduledId)}`) : admin('DELETE', `/scheduled/${id(scheduledId)}`);

/** The public API's suppression in the management API's shape (`email_address`; no id or email_id there). */
const asSuppression = ({ email, ...rest }) => ({ email_address: email, ...rest });
/** query: {email?, reason?, scope?, topic?}: answers {suppressions (the newest that match: 1000 for the operator, 100, a page of the public API, for an account), total}. */
export async function listSuppressions(accountId, query) {
  if (!mine()) return admin('GET', `/accounts/${id(accountId)}/suppressions`, { query });
  const { suppressions, total } = await own('GET', '/suppressions', { query: { ...query, page_size: 100 } });
  return { suppressions: suppressions.map(asSuppression), total };
}
/** suppression: {email, scope?: 'all' | 'broadcast', topic?}: reason manual; one that exists is answered again. */
export const addSuppression = async (accountId, suppression) =>
  mine()
    ? asSuppression(await own('POST', '/suppressions', { body: suppression }))
    : admin('POST', `/accounts/${id(accountId)}/suppressions`, { body: suppression });
/** csv: the file's text (header email[,scope[,topic]]); answers {imported, skipped, errors: [{line, message}]}. */
export const importSuppressions = (accountId, csv) =>
  mine()
    ? own('POST', '/suppressions/import', { csv })
    : admin('POST', `/accounts/${id(accountId)}/suppressions/import`, { csv });
/** Every suppression of the account, as the CSV text (email,reason,scope,topic,created_at). */
export const exportSuppressions = (accountId) =>
  mine()
    ? own('GET', '/suppressions/export', { asText: true })
    : admin('GET', `/accounts/${id(accountId)}/suppressions/export`, { asText: true });
/** One suppression as listed: by its id for the operator; by its address, scope and topic for an account. */
export const deleteSuppression = (item) =>
  mine()
    ? own('DELETE', `/suppressions/${id(item.email_address)}`, { query: { scope: item.scope, topic: item.topic } })
    : admin('DELETE', `/suppressions/${id(item.id)}`);

/** query: {page?, page_size?}: answers {templates: [{id, name, alias?, subject, version (the latest), published_version, ...}], total}. */
export const listTemplates = (accountId, query) =>
  mine() ? own('GET', '/templates', { query }) : admin('GET', `/accounts/${id(accountId)}/templates`, { query });
/** template: {name, alias?, subject, html?, text?, variables?, localizations?}: version 1, published. */
export const createTemplate = (accountId, template) =>
  mine()
    ? own('POST', '/templates', { body: template })
    : admin('POST', `/accounts/${id(accountId)}/templates`, { body: template });
/** The path of a template (by id or alias) in the session's API. */
const templatePath = (accountId, templateId) =>
  mine() ? `/templates/${id(templateId)}` : `/accounts/${id(accountId)}/templates/${id(templateId)}`;
const templates = (method, accountId, templateId, suffix = '', options) =>
  request(mine() ? PUBLIC : ADMIN, method, templatePath(accountId, templateId) + suffix, options);
/** By id or alias: the template at its latest version. */
export const getTemplate = (accountId, templateId) => templates('GET', accountId, templateId);
/** Any field of the create body: a new version; the published version stays until publishTemplate. */
export const updateTemplate = (accountId, templateId, changes) =>
  templates('PATCH', accountId, templateId, '', { body: changes });
export const getTemplateVersion = (accountId, templateId, version) =>
  templates('GET', accountId, templateId, `/versions/${id(version)}`);
/** Makes `version` the one sends use. */
export const publishTemplate = (accountId, templateId, version) =>
  templates('POST', accountId, templateId, '/publish', { body: { version } });
export const deleteTemplate = (accountId, templateId) => templates('DELETE', accountId, templateId);
/**
 * Renders content that is not stored, as a send would: the editor's live preview.
 * content: {subject, html?, text?, variables?, localizations?, sample_variables?, locale?}; answers {subject, html, text}.
 */
export const previewTemplate = (accountId, content) =>
  mine()
    ? own('POST', '/template-preview', { body: content })
    : admin('POST', `/accounts/${id(accountId)}/template-preview`, { body: content });

/** query: {page?, page_size?}: answers {routes: [{id, match, created_at}], total}, newest first. */
export const listInboundRoutes = (accountId, query) =>
  mine()
    ? own('GET', '/inbound/routes', { query })
    : admin('GET', `/accounts/${id(accountId)}/inbound/routes`, { query });
/** match: `local@domain` or `*@domain` on a verified domain of the account (409 when any account has it). */
export const createInboundRoute = (accountId, match) =>
  mine()
    ? own('POST', '/inbound/routes', { body: { match } })
    : admin('POST', `/accounts/${id(accountId)}/inbound/routes`, { body: { match } });
export const deleteInboundRoute = (routeId) => either('DELETE', `/inbound/routes/${id(routeId)}`);
/** query: {page?, page_size?}: answers {inbound_emails, total}, newest first. */
export const listInboundEmails = (accountId, query) =>
  mine()
    ? own('GET', '/inbound/emails', { query })
    : admin('GET', `/accounts/${id(accountId)}/inbound/emails`, { query });
export const getInboundEmail = (inboundId) => either('GET', `/inbound/emails/${id(inboundId)}`);
/** The message exactly as received (message/rfc822), as a Blob. */
export const getInboundRaw = (inboundId) => either('GET', `/inbound/emails/${id(inboundId)}/raw`, { asBlob: true });
/** Attachment `n` (from 0, in the order of `attachments`) as a Blob of its content type. */
export const getInboundAttachment = (inboundId, n) =>
  either('GET', `/inbound/emails/${id(inboundId)}/attachments/${id(n)}`, { asBlob: true });

/** The mail catcher: the operator's alone. */
export const listCaughtMessages = (limit) => admin('GET', '/catcher/messages', { query: { limit } });
export const getCaughtMessage = (messageId) => admin('GET', `/catcher/messages/${id(messageId)}`);

/** Egress shaping (direct delivery): the operator's alone. {rules: {path, error}, sites, pools} */
export const getEgressStatus = () => admin('GET', '/egress');
/** Ends a site's suspension, throttle and source suspensions; answers the site. */
export const resumeEgressSite = (site) => admin('DELETE', `/egress/sites/${id(site)}/suspension`);
