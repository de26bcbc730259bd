import {
  ACCOUNT_STATUSES,
  BATCH_STATUSES,
  EMAIL_STATUSES,
  EVENT_TYPES,
  JOB_TYPES,
  PERMISSIONS,
  SCHEDULED_FILTERS,
  SCHEDULED_STATUSES,
  STATS_GROUPS,
  STREAMS,
  SUPPRESSION_REASONS,
  SUPPRESSION_SCOPES,
} from '../domain/catalog.js';
import { BRAND_LOGO_URL_MAX, BRAND_LOGO_URL_PATTERN, BRAND_NAME_MAX, BRAND_NAME_PATTERN } from '../domain/branding.js';
import { CURSOR_PATTERN } from '../domain/event-cursor.js';
import { LIMITS } from '../domain/limits.js';
import { PAGE_MAX } from '../domain/pagination.js';
import { MAX_SCHEDULE_DAYS } from '../domain/schedule.js';
import { TOPIC_MAX_CHARS, TOPIC_PATTERN } from '../domain/streams.js';
import { COMPLIANCE } from '../domain/compliance.js';
import { DMARC_POLICIES } from '../domain/dmarc.js';
import { MATCH_MAX_CHARS } from '../domain/inbound-addresses.js';
import { TEMPLATE_LIMITS } from '../domain/template-fields.js';
import { DAILY_QUOTA_MAX, NAME_MAX as ACCOUNT_NAME_MAX } from '../services/accounts-service.js';
import { DOMAIN as ALLOWED_DOMAIN, NAME_MAX as API_KEY_NAME_MAX } from '../services/api-keys-service.js';
import { LIST_DEFAULT as CAUGHT_LIST_DEFAULT, LIST_MAX as CAUGHT_LIST_MAX } from '../services/caught-mail-service.js';
import { KEY_SHAPE } from '../services/idempotency.js';
import { IMPORT_MAX_ROWS } from '../services/suppression-csv.js';
import { EVENTS_PAGE } from '../services/events-service.js';
import { STATS_DAYS } from '../services/operator-service.js';
import { STATS_RANGE_DAYS } from '../services/stats-service.js';
import { SITE_NAME } from '../services/egress-status.js';
import {
  BULK_RESEND_MAX,
  DELIVERIES_PAGE,
  DELIVERY_STATUSES,
  DISCARD_REASONS,
  SECRET_OVERLAP,
  URL_MAX,
} from '../services/webhooks-service.js';

/**
 * What the proto types cannot say about a field: required, limits, vocabularies and formats, written from
 * the very constants the validation reads, so the OpenAPI document tightens and loosens with the code.
 * Rules a JSON Schema cannot state (an address's syntax, "html or text", a sum of recipients, a webhook
 * URL's reachability, scheduled_at's window) stay in the descriptions, and 400 is documented for them.
 */
export type Schema = Record<string, unknown>;

/** A field's extra schema; `items` and `propertyNames`/`additionalProperties` merge into the generated ones. */
type Constraints = Record<string, Schema>;

const enumOf = (values: readonly string[]) => ({ enum: [...values] });
/** A filter: one of the values, or empty for all. */
const filterOf = (values: readonly string[]) => ({ enum: ['', ...values] });
const dateTime = { format: 'date-time' };
/** A time the API writes with toISOString, or empty for none (egress shaping's state). */
const instantOrNone = { pattern: '^(\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z)?$' };
/** A count where 0, like absence, means the default (proto3 cannot tell them apart). */
const count = (max: number, fallback: number) => ({
  minimum: 0,
  maximum: max,
  description: `From 1 to ${max}; 0 or absent: ${fallback}.`,
});
const page = { minimum: 0, maximum: PAGE_MAX, description: 'Page number from 1; 0 or absent: the first page.' };
const pageSize = count(LIMITS.pageSizeMax, LIMITS.pageSizeDefault);

/**
 * No request string may hold a NUL byte (a 400 naming the field): openapi.ts gives every string without a
 * pattern of its own this one, and the patterns below exclude NUL themselves.
 */
export const NO_NUL = '^[^\\x00]*$';
// Something besides white space (names are trimmed), and no NUL.
const NOT_BLANK = '^[^\\x00]*[^\\s\\uFEFF\\x00][^\\x00]*$';

/** A key to create, by a key of the account (POST /api-keys) or by the operator (the account in the path). */
const apiKeyToCreate: Constraints = {
  name: { minLength: 1, maxLength: API_KEY_NAME_MAX, pattern: NOT_BLANK },
  permission: enumOf(PERMISSIONS),
  allowed_domains: { items: { pattern: ALLOWED_DOMAIN.source } },
  rate_limit: {
    minimum: 1,
    description:
      "The key's own requests per second, at most the service's MAILER_RATE_LIMIT (above it: 400); absent: that limit.",
  },
  daily_quota: {
    minimum: 0,
    maximum: DAILY_QUOTA_MAX,
    description:
      "The key's own emails per UTC day, at most the account's daily_quota (above it: 400), checked with the account's at every send; absent: the account's quota alone.",
  },
  expires_at: {
    ...dateTime,
    description: 'ISO 8601 with a zone, in the future (else 400); from then on the key is a 401. Absent: never.',
  },
};
// Printable characters only; tab is allowed in header and tag values.
const NO_CONTROL = '^[^\\x00-\\x08\\x0a-\\x1f\\x7f]*$';
const ADDRESS = {
  maxLength: LIMITS.addressChars,
  description: '`user@example.com` or `Name <user@example.com>`; one mailbox per entry (anything else is a 400).',
};
const addressList = (min: number) => ({ minItems: min, maxItems: LIMITS.recipients, items: ADDRESS });

const attachmentRequest: Constraints = {
  filename: { minLength: 1, maxLength: LIMITS.filenameChars, pattern: '^[^\\x00-\\x1f\\x7f/\\\\]+$' },
  content: {
    minLength: 1,
    contentEncoding: 'base64',
    pattern: '^[A-Za-z0-9+/_\\-\\r\\n\\t ]+={0,2}$',
    description: `The file's bytes in base64 (standard or URL-safe; line breaks allowed), at most ${LIMITS.attachmentBytes} bytes decoded.`,
  },
  content_type: {
    maxLength: 255,
    description: 'A media type such as `application/pdf`; empty: guessed from the filename.',
  },
  content_id: {
    maxLength: LIMITS.contentIdChars,
    pattern: '^[\\x21-\\x3b\\x3d\\x3f-\\x7e]*$',
    description:
      'Makes the file an inline part (`Content-ID: <content_id>`) that the html shows with `<img src="cid:content_id">`. ' +
      'Printable ASCII without `<`, `>` or white space, unique within the email; empty or absent: an ordinary attachment.',
  },
};

const draft: Constraints = {
  from: { minLength: 1, ...ADDRESS },
  to: {
    ...addressList(1),
    description: `At least one recipient; to, cc and bcc together at most ${LIMITS.recipients}.`,
  },
  cc: addressList(0),
  bcc: addressList(0),
  reply_to: addressList(0),
  subject: {
    maxLength: LIMITS.subjectChars,
    pattern: '^[^\\r\\n\\x00]*$',
    description: 'One line; required unless `template` is given (then absent).',
  },
  html: {
    maxLength: LIMITS.htmlBytes,
    description: `html or text is required unless \`template\` is given (then absent); at most ${LIMITS.htmlBytes} bytes in UTF-8.`,
  },
  text: {
    maxLength: LIMITS.textBytes,
    description: `html or text is required unless \`template\` is given (then absent); at most ${LIMITS.textBytes} bytes in UTF-8.`,
  },
  template: {
    description:
      'Instead of subject, html and text: a stored template, rendered when the email is accepted; every rule of a send applies to the result.',
  },
  attachments: { maxItems: LIMITS.attachments },
  stream: {
    ...filterOf(STREAMS),
    description:
      '`transactional` (empty or absent too) or `broadcast`. A broadcast email has exactly one address in `to` and none in `cc` or `bcc` (a 400 otherwise), and carries one-click unsubscribe.',
  },
  topic: {
    maxLength: TOPIC_MAX_CHARS,
    pattern: `^(${TOPIC_PATTERN.source.slice(1, -1)})?$`,
    description: `Only with stream \`broadcast\` (a 400 otherwise): 1-${TOPIC_MAX_CHARS} of A-Z a-z 0-9 . _ -, what an unsubscribe from the email covers; empty or absent: none.`,
  },
  headers: {
    maxProperties: LIMITS.customHeaders,
    propertyNames: { minLength: 1, maxLength: LIMITS.headerNameChars, pattern: '^[\\x21-\\x39\\x3b-\\x7e]+$' },
    additionalProperties: { maxLength: LIMITS.headerValueChars, pattern: NO_CONTROL },
    description:
      'Custom headers. Headers the service writes itself (From, To, Subject, Message-ID, Content-Type, ...) are refused.',
  },
  tags: {
    maxProperties: LIMITS.tags,
    propertyNames: { minLength: 1, maxLength: LIMITS.tagKeyChars, pattern: '^[A-Za-z0-9_-]+$' },
    additionalProperties: { maxLength: LIMITS.tagValueChars, pattern: NO_CONTROL },
  },
};

/** A suppression's address: one bare address, checked as a send's recipient (a 400 otherwise). */
const suppressionEmail = {
  minLength: 1,
  maxLength: LIMITS.addressChars,
  description: "One bare address (`user@example.com`), checked and canonicalised as a send's recipient.",
};
const suppressionScope = (description: string) => ({ ...filterOf(SUPPRESSION_SCOPES), description });
const suppressionTopic = (description: string) => ({
  maxLength: TOPIC_MAX_CHARS,
  pattern: `^(${TOPIC_PATTERN.source.slice(1, -1)})?$`,
  description,
});
/** A suppression list's filters (the account's GET /suppressions and the management API's list). */
const suppressionFilters = {
  email: {
    maxLength: LIMITS.addressChars,
    description: 'A whole address (exact match, as canonicalised) or a part of one (contains, case-insensitive).',
  },
  reason: filterOf(SUPPRESSION_REASONS),
  scope: filterOf(SUPPRESSION_SCOPES),
  topic: suppressionTopic('Only the suppressions for this topic; empty or absent: any.'),
};
/** A suppression added by hand (the account's POST /suppressions and the management API's). */
const suppressionToAdd = {
  email: suppressionEmail,
  scope: suppressionScope(
    '`all` (empty or absent too): every email to the address; `broadcast`: its broadcast emails.',
  ),
  topic: suppressionTopic(
    'Only with scope `broadcast` (a 400 otherwise): that topic alone; empty or absent: every topic.',
  ),
};
/** A suppression's topic as answered: the topic, or null when it is for every topic (or its scope is all). */
const shownTopic = { type: ['string', 'null'], pattern: TOPIC_PATTERN.source };

/** A rate of some mail, 0 to 1. */
const rate = { minimum: 0, maximum: 1 };
const rateFields = { bounce_rate: rate, complaint_rate: rate };

/** A stored email's topic, shown only when it has one. */
const emailTopic = { pattern: TOPIC_PATTERN.source };

/** An inbound route's match (the account's POST /inbound/routes and the management API's). */
const routeMatch = {
  match: {
    minLength: 1,
    maxLength: MATCH_MAX_CHARS,
    pattern: '^[^\\x00@]+@[^\\x00@]+$',
    description:
      '`local@domain` or `*@domain` (every local part): the domain a verified domain of the account or a subdomain of one, anything else a 400. No `+` in the local part (mail to `local+hash@domain` reaches `local@domain`, with `mailbox_hash`), `*` only as the whole local part; at most 64 characters before the `@`. Stored lower case, the domain in its ASCII form; 409 when any account has the match.',
  },
};

const templateName = {
  minLength: 1,
  maxLength: TEMPLATE_LIMITS.nameChars,
  pattern: '^[^\\x00-\\x1f\\x7f]*[^\\s\\uFEFF\\x00-\\x1f\\x7f][^\\x00-\\x1f\\x7f]*$',
};
const LOCALE = `[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*`;
const locale = {
  maxLength: TEMPLATE_LIMITS.localeChars,
  pattern: `^(${LOCALE})?$`,
  description:
    "A language tag (`de`, `de-AT`): its localization, then its language alone, then the template's own fields; empty: the template's own.",
};
const versionPick = (what: string) => ({
  minimum: 0,
  maximum: 2_147_483_647,
  description: `A version of the template; 0 or absent: ${what}.`,
});
const templateContent = (subjectRequired: boolean): Constraints => ({
  name: templateName,
  alias: {
    maxLength: TEMPLATE_LIMITS.aliasChars,
    pattern: '^[a-z0-9._-]*$',
    description: `1-${TEMPLATE_LIMITS.aliasChars} of a-z 0-9 . _ -, unique in the account (409 when taken), not starting with tpl_; empty: none.`,
  },
  subject: {
    ...(subjectRequired ? { minLength: 1 } : {}),
    maxLength: LIMITS.subjectChars,
    pattern: '^[^\\r\\n\\x00]*$',
    description: 'Handlebars; one line, as rendered at most the subject limit of a send.',
  },
  html: { maxLength: LIMITS.htmlBytes, description: 'Handlebars; `{{x}}` is HTML-escaped, `{{{x}}}` is not.' },
  text: { maxLength: LIMITS.textBytes, description: 'Handlebars; nothing is escaped.' },
  variables: {
    maxItems: TEMPLATE_LIMITS.variables,
    description: 'Declared variables; one the template uses without declaring it is required.',
  },
  localizations: {
    maxProperties: TEMPLATE_LIMITS.localizations,
    propertyNames: { maxLength: TEMPLATE_LIMITS.localeChars, pattern: `^${LOCALE}$` },
    description: 'Per-locale subject, html and text; each falls back on its own (de-AT, then de, then the template).',
  },
});
const templateAnswer = {
  version: { minimum: 1 },
  published_version: { minimum: 1 },
  created_at: dateTime,
  updated_at: dateTime,
};

/** GET /stats's query (the account's, and the operator's with the account in the path): services/stats-service.ts. */
/** stats-service.ts's ISO_8601, spaces around it allowed as the service trims them, or empty. */
const STATS_INSTANT =
  '^\\s*([0-9]{4}-[0-9]{2}-[0-9]{2}([Tt ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,9})?)?([Zz]|[+-][0-9]{2}:?[0-9]{2})?)?)?\\s*$';
const statsRequest: Constraints = {
  from: {
    pattern: STATS_INSTANT,
    description: `ISO 8601 date or date-time (no zone: UTC); counted from the start of its UTC day. Empty or absent: the start of the ${STATS_RANGE_DAYS.default}th UTC day back. At most ${STATS_RANGE_DAYS.max} days before \`to\`, never after it (else 400).`,
  },
  to: {
    pattern: STATS_INSTANT,
    description:
      'ISO 8601 date or date-time; counted through the end of its UTC day. Empty or absent: now. A date that does not exist (2026-02-30) is a 400.',
  },
  group_by: { ...filterOf(STATS_GROUPS), description: 'Empty or absent: day.' },
};

/** A domain to add (the account's POST /domains, the management API's). */
const domainToCreate: Constraints = {
  name: {
    minLength: 1,
    maxLength: 253 * 4,
    description:
      'The domain to send from, the domain of the From addresses it verifies (`example.com`, `mail.example.com`); an internationalised name is taken and stored in its ASCII (punycode) form. Not an address, a URL or an IP address (else 400).',
    examples: ['mail.example.com'],
  },
};

/** A webhook to create (the account's POST /webhooks, the management API's). */
const webhookToCreate: Constraints = {
  url: {
    minLength: 1,
    maxLength: URL_MAX,
    format: 'uri',
    pattern: '^https?://[^\\s/?#@\\x00]+([/?#][^\\s\\x00]*)?$',
    description: 'An http(s) URL without credentials whose host resolves to public addresses only.',
  },
  events: { minItems: 1, uniqueItems: true, items: enumOf(EVENT_TYPES) },
};

/** Keyed by component name (a request's nested message is `<Name>Input`), then JSON field name. */
export const FIELD_CONSTRAINTS: Record<string, Constraints> = {
  // Requests of the email API.
  SendEmailRequest: draft,
  ScheduleEmailRequest: {
    ...draft,
    scheduled_at: {
      ...dateTime,
      description: `ISO 8601 with a zone, in the future and at most ${MAX_SCHEDULE_DAYS} days ahead.`,
    },
  },
  AttachmentInput: attachmentRequest,
  SendBatchRequest: { emails: { minItems: 1, maxItems: LIMITS.batchEmails } },
  ListEmailsRequest: {
    page,
    page_size: pageSize,
    status: filterOf(EMAIL_STATUSES),
    job_type: filterOf(JOB_TYPES),
    stream: filterOf(STREAMS),
  },
  ListScheduledEmailsRequest: { page, limit: pageSize, status: filterOf(SCHEDULED_FILTERS) },
  ListBatchJobsRequest: { page, limit: pageSize, status: filterOf(BATCH_STATUSES) },
  ListEventsRequest: {
    after: {
      pattern: `^(${CURSOR_PATTERN.source.slice(1, -1)})?$`,
      description: 'Opaque: the next_cursor of an earlier answer; empty or absent: from the first event.',
    },
    limit: count(EVENTS_PAGE.max, EVENTS_PAGE.default),
    type: filterOf(EVENT_TYPES),
  },

  TemplateRefInput: {
    id: { minLength: 1, description: "The template's id (tpl_...) or alias; an unknown or deleted one is a 400." },
    variables: {
      description: "The values of the template's variables: any JSON (arrays and objects for {{#each}} and {{#with}}).",
    },
    locale,
    version: versionPick('the published version'),
  },
  CreateTemplateRequest: templateContent(true),
  UpdateTemplateRequest: {
    ...templateContent(false),
    variables: {
      ...templateContent(false).variables,
      items: { $ref: '#/components/schemas/TemplateVariableInput' },
    },
    localizations: {
      ...templateContent(false).localizations,
      additionalProperties: { $ref: '#/components/schemas/TemplateLocalizationInput' },
    },
  },
  TemplateVariableInput: {
    name: { minLength: 1, maxLength: TEMPLATE_LIMITS.variableNameChars, pattern: '^[A-Za-z_][A-Za-z0-9_-]*$' },
    required: { description: 'Default true.' },
    default: { description: 'Any JSON value, used when a send does not give the variable.' },
  },
  TemplateLocalizationInput: {
    subject: { maxLength: LIMITS.subjectChars, pattern: '^[^\\r\\n\\x00]*$' },
    html: { maxLength: LIMITS.htmlBytes },
    text: { maxLength: LIMITS.textBytes },
  },
  ListTemplatesRequest: { page, page_size: pageSize },
  SearchSuppressionsRequest: { ...suppressionFilters, page, page_size: pageSize },
  AddSuppressionRequest: suppressionToAdd,
  // The management API's list and add (the account named in the path): the account's own filters and body.
  ListSuppressionsRequest: suppressionFilters,
  AddAccountSuppressionRequest: suppressionToAdd,
  RemoveSuppressionRequest: {
    scope: suppressionScope('The suppression of this scope; empty or absent: every suppression of the address.'),
    topic: suppressionTopic(
      'With scope `broadcast`: the suppression for this topic; empty or absent: the one for every topic.',
    ),
  },
  ListAccountTemplatesRequest: { page, page_size: pageSize },
  ListInboundEmailsRequest: { page, page_size: pageSize },
  ListAccountInboundEmailsRequest: { page, page_size: pageSize },
  GetInboundAttachmentRequest: { n: { minimum: 0, description: "The attachment's place in `attachments`, from 0." } },
  CreateInboundRouteRequest: routeMatch,
  ListInboundRoutesRequest: { page, page_size: pageSize },
  CreateAccountInboundRouteRequest: routeMatch,
  ListAccountInboundRoutesRequest: { page, page_size: pageSize },
  PreviewTemplateRequest: (({ name: _name, alias: _alias, ...content }) => ({
    ...content,
    sample_variables: { description: 'The values to render with, as a send gives them.' },
    locale,
  }))(templateContent(true)),
  PublishTemplateRequest: { version: versionPick('the latest') },
  RenderTemplateRequest: { locale, version: versionPick('the published version') },

  // Requests of the management API.
  CreateAccountRequest: { name: { minLength: 1, maxLength: ACCOUNT_NAME_MAX, pattern: NOT_BLANK } },
  UpdateAccountRequest: {
    status: enumOf(ACCOUNT_STATUSES),
    daily_quota: { minimum: 0, maximum: DAILY_QUOTA_MAX },
    brand_name: {
      maxLength: BRAND_NAME_MAX,
      pattern: BRAND_NAME_PATTERN.source,
      description: 'The name the unsubscribe page shows instead of the account\'s; "" removes it.',
    },
    brand_logo_url: {
      maxLength: BRAND_LOGO_URL_MAX,
      pattern: `^(${BRAND_LOGO_URL_PATTERN.source.slice(1, -1)})?$`,
      description: 'An https:// URL of the logo the unsubscribe page shows; "" removes it.',
    },
  },
  // The account's own (POST /domains) and the operator's (the account in the path).
  CreateDomainRequest: domainToCreate,
  CreateAccountDomainRequest: domainToCreate,
  ListDomainsRequest: { page, page_size: pageSize },
  ListAccountDomainsRequest: { page, page_size: pageSize },
  CreateApiKeyRequest: apiKeyToCreate,
  CreateAccountApiKeyRequest: apiKeyToCreate,
  ListApiKeysRequest: { page, page_size: pageSize },
  ListAccountApiKeysRequest: { page, page_size: pageSize },
  CreateWebhookRequest: webhookToCreate,
  CreateAccountWebhookRequest: webhookToCreate,
  ListWebhooksRequest: { page, page_size: pageSize },
  ListAccountWebhooksRequest: { page, page_size: pageSize },
  RotateWebhookSecretRequest: {
    overlap_seconds: {
      minimum: 0,
      maximum: SECRET_OVERLAP.max,
      description: `Seconds the previous secret keeps signing; absent: ${SECRET_OVERLAP.default} (24 h).`,
    },
  },
  ResendWebhookDeliveriesRequest: {
    from: {
      ...dateTime,
      description: "Start of the range of the deliveries' events (inclusive), ISO 8601 with a zone; required.",
    },
    to: { description: 'End of the range (exclusive), ISO 8601 with a zone; empty or absent: now.' },
  },
  ListWebhookDeliveriesRequest: {
    status: filterOf(DELIVERY_STATUSES),
    limit: count(DELIVERIES_PAGE.max, DELIVERIES_PAGE.default),
  },
  ListAccountEmailsRequest: {
    page,
    page_size: pageSize,
    status: filterOf(EMAIL_STATUSES),
    job_type: filterOf(JOB_TYPES),
    stream: filterOf(STREAMS),
  },
  ListAccountBatchJobsRequest: { page, limit: pageSize, status: filterOf(BATCH_STATUSES) },
  ListAccountScheduledEmailsRequest: { page, limit: pageSize, status: filterOf(SCHEDULED_FILTERS) },
  GetAccountStatsRequest: { days: count(STATS_DAYS.max, STATS_DAYS.default), stream: filterOf(STREAMS) },
  GetStatsRequest: statsRequest,
  GetAccountGroupedStatsRequest: statsRequest,
  ListCaughtMessagesRequest: { limit: count(CAUGHT_LIST_MAX, CAUGHT_LIST_DEFAULT) },
  ResumeEgressSiteRequest: {
    site: {
      pattern: SITE_NAME.source,
      description:
        "A site's name as GET /egress lists it; another is a 400, one neither in the rules file nor in the state a 404.",
    },
  },
  EraseRecipientRequest: {
    address: {
      minLength: 1,
      maxLength: LIMITS.addressChars,
      description: 'The bare address (`user@example.com`), matched without regard to case; anything else is a 400.',
    },
    account_id: {
      description:
        'The account whose traces are erased; empty or absent: every account, and the mail caught by the built-in catcher.',
    },
  },

  // Answers: the vocabularies and formats the presenters write.
  SendEmailResponse: { status: enumOf(EMAIL_STATUSES) },
  ScheduleEmailResponse: { status: enumOf(SCHEDULED_STATUSES) },
  SendBatchResponse: { status: enumOf(BATCH_STATUSES) },
  Email: {
    status: enumOf(EMAIL_STATUSES),
    mal_status: { const: 'healthy' },
    created_at: dateTime,
    job_type: enumOf(JOB_TYPES),
    stream: enumOf(STREAMS),
    topic: emailTopic,
  },
  MailEvent: { event: enumOf(EVENT_TYPES), timestamp: dateTime },
  MailEventEmail: { sent_at: dateTime },
  EmailSummary: { status: enumOf(EMAIL_STATUSES), created_at: dateTime, stream: enumOf(STREAMS), topic: emailTopic },
  ScheduledEmail: { status: enumOf(SCHEDULED_STATUSES), scheduled_at: dateTime, created_at: dateTime },
  BatchJob: { status: enumOf(BATCH_STATUSES), created_at: dateTime, completed_at: dateTime },
  Account: { status: enumOf(ACCOUNT_STATUSES), created_at: dateTime },
  StreamHealth: { stream: enumOf(STREAMS), sent: { minimum: 0 }, ...rateFields },
  AccountCompliance: {
    window_days: { const: COMPLIANCE.windowDays },
    complaint_rate_limit: { const: COMPLIANCE.complaintRateLimit },
  },
  StreamCompliance: {
    stream: enumOf(STREAMS),
    sent: { minimum: 0 },
    complained: { minimum: 0 },
    unsubscribed: { minimum: 0 },
    complaint_rate: rate,
    unsubscribe_rate: rate,
  },
  DomainDmarc: {
    policy: { type: ['string', 'null'], enum: [...DMARC_POLICIES, null] },
    record_name: { pattern: '^(_dmarc\\..+)?$' },
  },
  Domain: { created_at: dateTime },
  DnsRecord: {
    type: enumOf(['TXT', 'MX']),
    value: { description: "The record's data as one string (a TXT value unsplit, an MX as `<preference> <host>`)." },
    zone_value: {
      description:
        'The value as a zone file and most DNS providers take it. TXT: quoted character strings of at most 255 characters each, the most one DNS character string holds (RFC 1035), so a DKIM key\'s value comes as `"v=DKIM1; k=rsa; p=MIIB…" "…"`, whose concatenation is `value`; 255 or fewer, one quoted string. MX: `value` as it is.',
    },
  },
  ApiKey: {
    permission: enumOf(PERMISSIONS),
    created_at: dateTime,
    rate_limit: { minimum: 1 },
    daily_quota: { minimum: 0, maximum: DAILY_QUOTA_MAX },
    expires_at: dateTime,
    last_used_at: dateTime,
  },
  ApiKeyUsage: { sent_today: { minimum: 0 } },
  Webhook: {
    events: { items: enumOf(EVENT_TYPES) },
    created_at: dateTime,
    previous_secret_until: dateTime,
    disabled_at: dateTime,
  },
  WebhookDelivery: {
    status: enumOf(DELIVERY_STATUSES),
    created_at: dateTime,
    completed_at: dateTime,
    discard_reason: enumOf(DISCARD_REASONS),
  },
  ResendWebhookDeliveriesResponse: { queued: { minimum: 0, maximum: BULK_RESEND_MAX } },
  WebhookAttempt: { started_at: dateTime },
  EmailEvent: { type: enumOf(EVENT_TYPES), created_at: dateTime },
  DailyStats: { day: { format: 'date' } },
  Suppression: {
    reason: enumOf(SUPPRESSION_REASONS),
    created_at: dateTime,
    scope: enumOf(SUPPRESSION_SCOPES),
    topic: shownTopic,
  },
  SuppressionEntry: {
    reason: enumOf(SUPPRESSION_REASONS),
    scope: enumOf(SUPPRESSION_SCOPES),
    topic: shownTopic,
    created_at: dateTime,
  },
  ImportSuppressionsResponse: {
    imported: { minimum: 0, maximum: IMPORT_MAX_ROWS },
    skipped: { minimum: 0, maximum: IMPORT_MAX_ROWS },
  },
  CaughtMessage: { received_at: dateTime },
  Template: { ...templateAnswer, latest_version: { minimum: 1 } },
  TemplateSummary: templateAnswer,
  EmailTemplate: { version: { minimum: 1 } },
  InboundEmail: { received_at: dateTime },
  InboundRoute: { match: { pattern: '^[^@]+@[^@]+$' }, created_at: dateTime },
  EgressSite: {
    connection_limit: { minimum: 0 },
    messages_per_connection: { minimum: 0 },
    throttled_until: instantOrNone,
    suspended_until: instantOrNone,
    connections: { minimum: 0 },
    attempts_last_minute: { minimum: 0 },
    updated_at: instantOrNone,
  },
  EgressSuspendedSource: { until: instantOrNone },
  EgressReply: { at: instantOrNone, code: { minimum: 0, maximum: 999 } },
  EgressSource: { warmup_limit_today: { minimum: -1 }, sent_today: { minimum: 0 } },
};

/** The Idempotency-Key header of the three send endpoints. */
export const IDEMPOTENCY_KEY_SCHEMA: Schema = {
  type: 'string',
  minLength: 1,
  maxLength: 256,
  // KEY_SHAPE with its length quantifier spelt as minLength/maxLength.
  pattern: KEY_SHAPE.source.replace('{1,256}', '+'),
};
