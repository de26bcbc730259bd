import { ScalarType, type DescField, type DescMessage } from '@bufbuild/protobuf';
import { BODY_LIMITS } from '../domain/limits.js';
import { ERROR_TABLE } from '../errors.js';
import { FIELD_CONSTRAINTS, IDEMPOTENCY_KEY_SCHEMA, NO_NUL, type Schema } from './openapi-constraints.js';
import { Components, fieldSchema, messageSchema } from './openapi-message-schema.js';
import { queryFields, readsQuery } from './query-params.js';
import { IMPORT_MAX_ROWS } from '../services/suppression-csv.js';
import { WEBHOOKS_MAX } from '../services/webhooks-service.js';
import { DOMAINS_MAX } from '../services/domains-service.js';
import { ADMIN_BASE, ADMIN_ROUTES, API_BASE, PUBLIC_ROUTES, type RestRoute } from './rest-routes.js';

/**
 * The OpenAPI 3.1 document of the REST gateway, generated from the route table, the proto descriptors and
 * the validation's own constants (openapi-constraints.ts): the schema is written once, in proto/, the
 * limits once, in the code that enforces them, and this can drift from neither. The contract test
 * (test/contract/fuzz.test.ts) fuzzes the running service against it.
 */

/** The public API's tags besides `emails`, each with the paths it covers (those and the paths under them). */
const PUBLIC_TAGS: Record<string, string[]> = {
  templates: ['/templates'],
  suppressions: ['/suppressions'],
  inbound: ['/inbound'],
  account: ['/account', '/domains', '/api-keys', '/webhooks', '/webhook-deliveries'],
};
const publicTag = (path: string): string =>
  Object.entries(PUBLIC_TAGS).find(([, paths]) => paths.some((p) => path === p || path.startsWith(`${p}/`)))?.[0] ??
  'emails';

/**
 * An import's body: the header line, then rows; what it states is all a valid request needs (a bad row is
 * listed in the answer, not refused), so a fuzzer's schema-valid bodies are answered 200.
 */
const CSV_IMPORT_SCHEMA = {
  type: 'string',
  maxLength: BODY_LIMITS.suppressionImport,
  pattern: '^email(,scope(,topic)?)?(\\r\\n|\\n|\\r|$)[^\\x00]*$',
};

/** The endpoints that send, and take an Idempotency-Key. */
const SENDS = new Set(['sendEmail', 'scheduleEmail', 'sendBatch']);

/** Operations refused with 409 by the state of what they change, beside the sends' Idempotency-Key. */
const CONFLICTS: Record<string, string> = {
  rotateDomainDkim: 'A rotation is already pending: its new key waits for its DNS record',
  eraseEmail: 'The email is still being delivered (pending): erase it once it is delivered or bounced',
  createTemplate: 'The alias is already used by another template of the account',
  updateTemplate: 'The alias is already used by another template of the account',
  createAccountTemplate: 'The alias is already used by another template of the account',
  updateAccountTemplate: 'The alias is already used by another template of the account',
  createInboundRoute: 'An inbound route of some account has this match already',
  createAccountInboundRoute: 'An inbound route of some account has this match already',
};

/** The suppression import's rules, the account's own and the management API's. */
const IMPORT_RULES = `The body is the CSV itself (Content-Type: text/csv; any other type is a 415): RFC 4180, header \`email[,scope[,topic]]\` on line 1 (anything else is a 400), at most ${IMPORT_MAX_ROWS} rows (more is a 413). Each row is checked as POST /suppressions checks its body; a bad row is listed in \`errors\` by its line (the header is line 1) and the others are imported with reason manual. \`skipped\`: valid rows the account had already, or that repeat an earlier row. A cell written by the export with a leading \`'\` before = + - @ tab CR or \`'\` (its spreadsheet-formula defusing) is read without it.`;
const EXPORT_RULES =
  "Every suppression of the account, oldest first, streamed as CSV with the header email,reason,scope,topic,created_at (topic empty when none). A cell that starts with = + - @ tab CR or ' is written with a ' before it, so that a spreadsheet does not read it as a formula; the import takes it off again.";

/** An inbound route's rules that depend on the account's domains. */
const ROUTE_RULES =
  "A match whose domain is not a verified domain of the account, nor a subdomain of one, is a 400 (whether another account has the domain is not told); one that any account has already is a 409. The domain then lists an MX record (purpose inbound) for the match's domain among its dns_records.";

/** Rules that depend on what is stored, which no schema can state: 400s for requests the schema allows. */
const STATE_RULES: Record<string, string> = {
  createDomain: `A domain already added to the account is a 400; so is one more when the account has ${DOMAINS_MAX}.`,
  createApiKey:
    "rate_limit above the service's MAILER_RATE_LIMIT, daily_quota above the account's daily_quota and an expires_at not in the future are each a 400 naming the field.",
  createWebhook: `An account has at most ${WEBHOOKS_MAX} webhooks: one more is a 400 (delete one first).`,
  cancelScheduledEmail: 'Cancelling an email already cancelled answers 200 again; one already sent is a 400.',
  resendWebhookDelivery: 'A delivery still being tried, or one of a deleted webhook, is a 400.',
  resendWebhookDeliveries:
    'A disabled webhook is a 400 (enable it first); so is a range whose from is not before its to.',
  eraseRecipient: 'An address that is not one bare, valid address is a 400.',
  createTemplate: 'Content that does not compile (Handlebars) is a 400 naming the field, line and column.',
  updateTemplate:
    'Content that does not compile is a 400 naming the field, line and column; the edit is a new version, and sends keep the published one.',
  previewAccountTemplate:
    "Content that does not compile is a 400 naming the field, line and column; so is a required variable not given, and output past a send's limits.",
  renderTemplate:
    "A required variable not given (with no default) is a 400 naming it; so is output past a send's limits. The answer is what a send with these variables would store.",
  addSuppression:
    'An email that is not one bare, valid address is a 400, as is a topic with a scope other than broadcast. Adding a suppression the account has already answers it again, as stored (its reason kept). Needs a key with permission all.',
  removeSuppression:
    'The path holds the address (URL-encoded); one that is not a valid address is a 400, and a topic without scope=broadcast too. 404 when the account has no such suppression. Needs a key with permission all.',
  importSuppressions: `${IMPORT_RULES} Needs a key with permission all.`,
  exportSuppressions: `${EXPORT_RULES} Needs a key with permission all or read_only.`,
  listSuppressions:
    "The filters are those of the account's GET /suppressions. At most the newest 1000 are listed; `total` says how many match. An unknown account is a 404.",
  addAccountSuppression:
    "As the account's POST /suppressions: an email that is not one bare, valid address is a 400, as is a topic with a scope other than broadcast; a suppression the account has already is answered again, as stored (its reason kept). An unknown account is a 404.",
  importAccountSuppressions: `As the account's POST /suppressions/import. ${IMPORT_RULES} An unknown account is a 404.`,
  exportAccountSuppressions: `As the account's GET /suppressions/export. ${EXPORT_RULES} An unknown account is a 404.`,
  searchSuppressions: 'Needs a key with permission all or read_only.',
  createInboundRoute: `${ROUTE_RULES} Needs a key with permission all.`,
  listInboundRoutes: 'Needs a key with permission all or read_only.',
  deleteInboundRoute: "Another account's route is a 404. Needs a key with permission all.",
  createAccountInboundRoute: `As the account's POST /inbound/routes. ${ROUTE_RULES} An unknown account is a 404.`,
  previewTemplate:
    "Content that does not compile is a 400 naming the field, line and column; so is a required variable not given, and output past a send's limits. Nothing is stored. Needs a key with permission all.",
  listEmailEvents: "Another account's email is a 404, as one that does not exist. Needs a key of any permission.",
  listEvents:
    "email_id: only that email's events (another account's email, or one that does not exist, is a 404). Needs a key of any permission; type=inbound one that may read inbound mail.",
};

const MANAGE = 'Needs a key with permission all.';
const READ = 'Needs a key with permission all or read_only.';
/** The public self-service operations' permissions, and what differs from the management API's. */
const KEY_RULES: Record<string, string> = {
  getAccount: 'Needs a key of any permission.',
  createDomain: MANAGE,
  listDomains: READ,
  getDomain: `Another account's domain is a 404, as one that does not exist. ${READ}`,
  deleteDomain: `Another account's domain is a 404. ${MANAGE}`,
  updateDomain: MANAGE,
  verifyDomain: `force: true is a 403: verifying without the records in DNS is the operator's alone (the management API). ${MANAGE}`,
  rotateDomainDkim: MANAGE,
  createWebhook: MANAGE,
  listWebhooks: READ,
  deleteWebhook: `Another account's webhook is a 404. ${MANAGE}`,
  verifyWebhook: MANAGE,
  rotateWebhookSecret: MANAGE,
  enableWebhook: MANAGE,
  resendWebhookDeliveries: MANAGE,
  listWebhookDeliveries: READ,
  resendWebhookDelivery: `Another account's delivery is a 404. ${MANAGE}`,
  createApiKey: MANAGE,
  listApiKeys: READ,
  deleteApiKey: `Another account's key is a 404. A key may delete itself: the next request with it is a 401. ${MANAGE}`,
};

/** An operation's rules in words: those of what is stored (both APIs), then the key's (the public API). */
function description(name: string, api: 'email' | 'admin'): string | undefined {
  const text = [STATE_RULES[name], api === 'email' ? KEY_RULES[name] : undefined].filter((t) => t !== undefined);
  return text.length > 0 ? text.join(' ') : undefined;
}

/** A request that succeeds against a fresh service (its default account sends from the verified example.com). */
const EXAMPLE_EMAIL = {
  from: 'Sender <sender@example.com>',
  to: ['rcpt@example.net'],
  subject: 'Hello',
  text: 'Hello there',
};
const REQUEST_EXAMPLES: Record<string, unknown> = {
  sendEmail: EXAMPLE_EMAIL,
  createTemplate: {
    name: 'Welcome',
    subject: 'Welcome, {{name}}',
    html: '<p>Hello {{name}}</p>',
    text: 'Hello {{name}}',
    variables: [{ name: 'name', default: 'there' }],
    localizations: { de: { subject: 'Willkommen, {{name}}' } },
  },
  sendBatch: { emails: [EXAMPLE_EMAIL, { ...EXAMPLE_EMAIL, to: ['other@example.net'] }] },
};

/**
 * Where an answer's id may be used next (OpenAPI links), by RPC name, within the same API (links() makes them
 * operation ids): clients and the contract test's stateful phase follow them. A webhook's verify is left out: it
 * calls the URL.
 */
const LINKS: Record<string, { from: string; to: string[] }> = {
  sendEmail: { from: 'id', to: ['getEmail', 'listEmailEvents'] },
  scheduleEmail: { from: 'id', to: ['getScheduledEmail', 'cancelScheduledEmail'] },
  sendBatch: { from: 'job_id', to: ['getBatchJob'] },
  createAccount: {
    from: 'id',
    to: [
      'getAccount',
      'updateAccount',
      'createDomain',
      'listDomains',
      'createApiKey',
      'listApiKeys',
      'createWebhook',
      'listWebhooks',
      'listAccountEmails',
      'listAccountBatchJobs',
      'listAccountScheduledEmails',
      'getAccountStats',
      'getAccountGroupedStats',
      'listSuppressions',
      'addAccountSuppression',
      'importAccountSuppressions',
      'exportAccountSuppressions',
      'createAccountInboundRoute',
      'listAccountInboundRoutes',
    ],
  },
  createDomain: { from: 'id', to: ['getDomain', 'verifyDomain', 'updateDomain', 'rotateDomainDkim', 'deleteDomain'] },
  createTemplate: {
    from: 'id',
    to: ['getTemplate', 'updateTemplate', 'getTemplateVersion', 'publishTemplate', 'renderTemplate', 'deleteTemplate'],
  },
  createApiKey: { from: 'id', to: ['deleteApiKey'] },
  addSuppression: { from: 'email', to: ['removeSuppression'] },
  createInboundRoute: { from: 'id', to: ['deleteInboundRoute'] },
  createAccountInboundRoute: { from: 'id', to: ['deleteAccountInboundRoute'] },
  createWebhook: {
    from: 'id',
    to: ['listWebhookDeliveries', 'deleteWebhook', 'rotateWebhookSecret', 'enableWebhook', 'resendWebhookDeliveries'],
  },
};

function links(name: string, api: 'email' | 'admin'): Schema | undefined {
  const link = LINKS[name];
  if (!link) return undefined;
  return Object.fromEntries(
    link.to.map((to) => {
      const id = operationId(to, api);
      return [id, { operationId: id, parameters: { id: `$response.body#/${link.from}` } }];
    }),
  );
}

const PUBLIC_RPCS = new Set(PUBLIC_ROUTES.map((r) => r.rpc.localName));
/**
 * Operation ids are unique: a management API operation whose RPC shares its name with a public one (the account's
 * own domains, keys and webhooks, its GetAccount, the cancel of a scheduled email) is suffixed `Admin`.
 */
const operationId = (name: string, api: 'email' | 'admin'): string =>
  name + (api === 'admin' && PUBLIC_RPCS.has(name) ? 'Admin' : '');

const ERROR_REF = { $ref: '#/components/schemas/Error' };
const INTEGER_HEADER = { schema: { type: 'integer', minimum: 0 } };
const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': { description: 'Requests per second this API key may make.', ...INTEGER_HEADER },
  'RateLimit-Remaining': { description: 'Requests left in the current window.', ...INTEGER_HEADER },
  'RateLimit-Reset': { description: 'Seconds until the window is full again.', ...INTEGER_HEADER },
};
const required = (headers: Record<string, Schema>) =>
  Object.fromEntries(Object.entries(headers).map(([name, h]) => [name, { ...h, required: true }]));
/** On every answer (request-context.ts). Not a documented parameter: any value is taken, a bad one just replaced. */
const REQUEST_ID = {
  'X-Request-Id': {
    description:
      "The request's id, also in every log line written for it: the caller's own X-Request-Id when it is 1 to 64 of A-Z a-z 0-9 . _ : -, else a new one.",
    required: true,
    schema: { type: 'string', minLength: 1, maxLength: 64 },
  },
};
const RETRY_AFTER = {
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    required: true,
    schema: { type: 'integer', minimum: 1 },
  },
};

function errorAnswer(description: string, headers: Record<string, Schema> = {}): Schema {
  return {
    description,
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    content: { 'application/json': { schema: ERROR_REF } },
  };
}

/** Every answer an operation can give: the error table's statuses that its rules and its gateway can reach. */
function responses(route: RestRoute, api: 'email' | 'admin', hasBody: boolean): Schema {
  const answer = route.csv?.stream
    ? { 'text/csv': { schema: { type: 'string' } } }
    : route.bytes
      ? { [route.bytes.contentType]: { schema: { type: 'string', contentMediaType: route.bytes.contentType } } }
      : { 'application/json': { schema: { $ref: `#/components/schemas/${route.rpc.output.name}` } } };
  const isSend = SENDS.has(route.rpc.localName);
  // The email API's answers after the key is admitted carry the key's RateLimit headers.
  const rate = api === 'email' ? RATE_LIMIT_HEADERS : {};
  const next = links(route.rpc.localName, api);
  const out: Record<string, Schema> = {
    200: {
      description: route.bytes
        ? 'The stored bytes, streamed, with Content-Disposition: attachment (a safe file name), X-Content-Type-Options: nosniff and a sandboxing Content-Security-Policy'
        : 'Success',
      ...(api === 'email' ? { headers: required(RATE_LIMIT_HEADERS) } : {}),
      content: answer,
      ...(next ? { links: next } : {}),
    },
    400: errorAnswer('The request breaks a rule of the API (the message names the field)', rate),
    401: errorAnswer(api === 'email' ? 'Missing, wrong or deleted API key' : 'Missing or wrong admin token'),
  };
  if (api === 'email')
    out[403] = errorAnswer("The key's permission, allowed domains or account status forbid this", rate);
  out[404] = errorAnswer('No such resource (or route)', rate);
  if (isSend)
    out[409] = errorAnswer('A request with this Idempotency-Key is still being answered', { ...rate, ...RETRY_AFTER });
  const conflict = CONFLICTS[route.rpc.localName];
  if (conflict) out[409] = errorAnswer(conflict, rate);
  if (route.idField !== undefined || route.params !== undefined)
    out[414] = errorAnswer('The path id is longer than the router accepts (no id the service issues is)');
  if (route.csv?.body !== undefined)
    out[415] = errorAnswer('The body is not text/csv (its Content-Type says otherwise)', rate);
  if (hasBody)
    out[413] = errorAnswer(
      `The body exceeds this endpoint's limit of ${route.bodyLimit ?? BODY_LIMITS.other} bytes`,
      rate,
    );
  if (api === 'email') {
    out[429] = {
      description:
        'Rate limit exceeded (`{error: "too many requests", message}`)' +
        (hasBody
          ? ", or request bodies in flight over the key's or the server's cap (the same, the message naming the cap)"
          : '') +
        (isSend
          ? ', or the daily quota (`{error: "daily quota exceeded (<used>/<total>), resets at <time>"}`, no message)'
          : ''),
      headers: { ...RATE_LIMIT_HEADERS, ...RETRY_AFTER },
      content: { 'application/json': { schema: ERROR_REF } },
    };
  } else {
    out[429] = errorAnswer(
      'Too many wrong admin tokens from this address, or from all (`{error: "too many requests", message}`)' +
        (hasBody ? ", or request bodies in flight over the server's cap" : ''),
      RETRY_AFTER,
    );
  }
  out[503] = errorAnswer('The service is stopping, or its database or Temporal is unavailable');
  for (const answer of Object.values(out))
    answer.headers = { ...REQUEST_ID, ...(answer.headers as Record<string, Schema> | undefined) };
  return out;
}

/** The field at a dotted path of a message (`template.id`); undefined when there is none. */
function fieldAt(message: DescMessage, path: string): DescField | undefined {
  const [head, ...rest] = path.split('.');
  const field = message.fields.find((f) => f.name === head);
  if (rest.length === 0 || field === undefined) return field;
  return field.message ? fieldAt(field.message, rest.join('.')) : undefined;
}

/**
 * A path parameter: an id (any text without NUL, or the field's own pattern in FIELD_CONSTRAINTS when it states
 * one: a site's name) or, for an integer field, a number from 1 (from the field's own `minimum` when it states
 * one: an attachment's place counts from 0).
 */
function pathParam(name: string, field: DescField | undefined, constraints: Schema = {}): Schema {
  const integer = field?.fieldKind === 'scalar' && field.scalar === ScalarType.INT32;
  const pattern = typeof constraints.pattern === 'string' ? constraints.pattern : NO_NUL;
  return {
    name,
    in: 'path',
    required: true,
    schema: integer
      ? { type: 'integer', minimum: (constraints.minimum as number | undefined) ?? 1, maximum: 2_147_483_647 }
      : { type: 'string', minLength: 1, pattern },
  };
}

function operation(route: RestRoute, api: 'email' | 'admin', components: Components): Schema {
  const input = route.rpc.input;
  const constraints = FIELD_CONSTRAINTS[input.name] ?? {};
  const params = Object.entries(route.params ?? {});
  const pathParams = [
    ...(route.idField ? [pathParam('id', undefined)] : []),
    ...params.map(([param, field]) => pathParam(param, fieldAt(input, field), constraints[field])),
  ];
  // Top-level fields the path fills; fields of the body's message it fills are left out of the body.
  const fromPath = new Set([route.idField, ...params.map(([, field]) => field)]);
  const fromQuery = readsQuery(route);
  // Exactly the names the gateway takes (query-params.ts); any other is a 400.
  const queryParams = queryFields(route).map((f) => ({
    name: f.name,
    in: 'query',
    required: false,
    schema: fieldSchema(f, 'request', components, constraints[f.name]),
  }));
  const bodyMessage = route.bodyField ? fieldAt(input, route.bodyField)?.message : input;
  if (bodyMessage === undefined) throw new Error(`${route.rpc.name}: no message field ${route.bodyField ?? ''}`);
  const bodyOmits = route.bodyField
    ? [...fromPath]
        .filter((f) => f?.startsWith(`${route.bodyField}.`))
        .map((f) => f!.slice(route.bodyField!.length + 1))
    : [...fromPath].filter((f) => f !== undefined);
  const name = route.rpc.localName;
  const idempotencyKey = SENDS.has(name)
    ? [
        {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            'Repeating a request with the same key within 24 hours answers the first answer again and sends nothing twice.',
          schema: IDEMPOTENCY_KEY_SCHEMA,
        },
      ]
    : [];
  if (!route.csv?.stream && !route.bytes) components.ref(route.rpc.output, 'response');
  const example = REQUEST_EXAMPLES[name];
  return {
    operationId: operationId(name, api),
    summary: route.summary,
    ...(description(name, api) ? { description: description(name, api) } : {}),
    tags: [api === 'admin' ? 'admin' : publicTag(route.path)],
    security: [{ [api === 'email' ? 'apiKey' : 'adminToken']: [] }],
    parameters: [...pathParams, ...queryParams, ...idempotencyKey],
    ...(fromQuery
      ? {}
      : {
          requestBody: {
            required: true,
            content: route.csv?.body
              ? { 'text/csv': { schema: CSV_IMPORT_SCHEMA, example: 'email,scope,topic\r\nuser@example.net,,\r\n' } }
              : {
                  'application/json': {
                    schema: messageSchema(bodyMessage, 'request', components, bodyOmits),
                    ...(example ? { example } : {}),
                  },
                },
          },
        }),
    responses: responses(route, api, !fromQuery),
  };
}

export function buildOpenApi(publicUrl: string): Schema {
  const components = new Components();
  const paths: Record<string, Record<string, Schema>> = {};
  const add = (base: string, routes: RestRoute[], api: 'email' | 'admin') => {
    for (const r of routes) {
      const p = `${base}${r.path}`.replace(/:(\w+)/g, '{$1}');
      (paths[p] ??= {})[r.method.toLowerCase()] = operation(r, api, components);
    }
  };
  add(API_BASE, PUBLIC_ROUTES, 'email');
  add(ADMIN_BASE, ADMIN_ROUTES, 'admin');
  const schemas: Record<string, Schema> = {
    Error: {
      type: 'object',
      required: ['error'],
      properties: {
        error: { type: 'string', examples: [...new Set(Object.values(ERROR_TABLE).map((e) => e.error))] },
        message: { type: 'string' },
      },
      additionalProperties: false,
      description: "Every error answer. The daily quota's 429 carries only `error` (which holds the numbers).",
    },
  };
  // Referenced messages may reference more: expand until closed.
  for (let grew = true; grew;) {
    grew = false;
    for (const [name, { message, role }] of components.pending) {
      if (name in schemas) continue;
      schemas[name] = messageSchema(message, role, components);
      grew = true;
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'mailer: transactional email API',
      version: 'v1',
      description:
        "Generated from proto/mail/v1 and the service's validation rules. Errors answer {error, message}. A query parameter an operation does not declare is a 400 naming it.",
    },
    servers: [{ url: publicUrl }],
    tags: [
      { name: 'emails', description: 'The public API (an API key)' },
      { name: 'templates', description: 'Stored, versioned templates a send can name (an API key)' },
      {
        name: 'suppressions',
        description: "The account's suppression list: list, add, remove, CSV import and export (an API key)",
      },
      {
        name: 'inbound',
        description:
          "Inbound mail: the routes that claim addresses of the account's domains, and the mail received for them (an API key)",
      },
      {
        name: 'account',
        description:
          'The account itself, its sender domains, API keys and webhooks, managed with its own key (an API key)',
      },
      { name: 'admin', description: 'The management API (the admin token)' },
    ],
    paths,
    components: {
      schemas,
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'An API key: Authorization: Bearer <API_KEY>' },
        adminToken: { type: 'http', scheme: 'bearer', description: 'The admin token (MAILER_ADMIN_TOKEN)' },
      },
    },
  };
}
