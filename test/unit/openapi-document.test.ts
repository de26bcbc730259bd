import { describe, expect, it } from 'vitest';
import { ACCOUNT_STATUSES, EVENT_TYPES, PERMISSIONS } from '../../src/domain/catalog.js';
import { MATCH_MAX_CHARS } from '../../src/domain/inbound-addresses.js';
import { BODY_LIMITS, LIMITS } from '../../src/domain/limits.js';
import { buildOpenApi } from '../../src/http/openapi.js';
import { DAILY_QUOTA_MAX } from '../../src/services/accounts-service.js';

/** The document states the rules the validation enforces, from the same constants (the fuzz test holds the service to it). */

type S = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const doc = buildOpenApi('http://127.0.0.1:8080') as S;
const op = (method: string, path: string): S => doc.paths[path][method];
const body = (method: string, path: string): S => op(method, path).requestBody.content['application/json'].schema;
const schema = (name: string): S => doc.components.schemas[name];
const ops = (): [string, string, S][] =>
  Object.entries(doc.paths as Record<string, S>).flatMap(([p, methods]) =>
    Object.entries(methods).map(([m, o]) => [m, p, o as S] as [string, string, S]),
  );

describe('the OpenAPI document', () => {
  it("states the send request's required fields and limits from LIMITS", () => {
    const send = body('post', '/v1/mail/emails');
    expect(send.required).toEqual(['from', 'to']);
    // Either its own content (a subject, and html or text) or a template, not both.
    expect(send.if).toEqual({ required: ['template'] });
    expect(send.then).toMatchObject({ properties: { subject: { maxLength: 0 }, html: { maxLength: 0 } } });
    expect(send.else).toMatchObject({ required: ['subject'], properties: { subject: { minLength: 1 } } });
    expect(send.else.anyOf).toHaveLength(2);
    expect(send.additionalProperties).toBe(false);
    expect(send.properties.subject).toMatchObject({ maxLength: LIMITS.subjectChars });
    expect(send.properties.template).toEqual({ $ref: '#/components/schemas/TemplateRefInput' });
    expect(schema('TemplateRefInput').required).toEqual(['id']);
    expect(send.properties.to).toMatchObject({
      minItems: 1,
      maxItems: LIMITS.recipients,
      items: { maxLength: LIMITS.addressChars },
    });
    expect(send.properties.attachments.maxItems).toBe(LIMITS.attachments);
    expect(send.properties.headers.maxProperties).toBe(LIMITS.customHeaders);
    expect(send.properties.tags.propertyNames.maxLength).toBe(LIMITS.tagKeyChars);
    expect(schema('AttachmentInput').required).toEqual(['filename', 'content']);
    expect(schema('AttachmentInput').properties.filename.maxLength).toBe(LIMITS.filenameChars);
    expect(schema('AttachmentInput').properties.content_id).toMatchObject({
      maxLength: LIMITS.contentIdChars,
      pattern: expect.any(String),
    });
    const contentId = new RegExp(schema('AttachmentInput').properties.content_id.pattern as string);
    expect(['', 'logo', 'part1.x@example.com'].filter((id) => contentId.test(id))).toHaveLength(3);
    expect(['<logo>', 'my logo', 'a\tb', 'lögo'].filter((id) => contentId.test(id))).toEqual([]);
    expect(body('post', '/v1/mail/emails/schedule').properties.scheduled_at.format).toBe('date-time');
    expect(body('post', '/v1/mail/emails/batch').properties.emails).toMatchObject({
      minItems: 1,
      maxItems: LIMITS.batchEmails,
    });
  });

  it('gives the sends every field as properties at the top, the content-or-template rule where client generators ignore it', () => {
    // openapi-python-client and openapi-generator build a request model from a top-level oneOf/anyOf alone
    // (dropping from, to and subject): the bodies have none, and the rule lives in if/then/else.
    const sends = [
      body('post', '/v1/mail/emails'),
      body('post', '/v1/mail/emails/schedule'),
      schema('SendEmailRequest'), // a batch's items
    ];
    for (const send of sends) {
      expect(send.type).toBe('object');
      expect(Object.keys(send.properties)).toEqual(
        expect.arrayContaining(['from', 'to', 'subject', 'html', 'text', 'template']),
      );
      expect(send.required).toEqual(expect.arrayContaining(['from', 'to']));
      expect(send).not.toHaveProperty('oneOf');
      expect(send).not.toHaveProperty('anyOf');
      expect(send).not.toHaveProperty('allOf');
    }
    expect(body('post', '/v1/mail/emails/batch').properties.emails.items).toEqual({
      $ref: '#/components/schemas/SendEmailRequest',
    });
  });

  it('keeps request and answer forms of a shared message apart (answers carry no input rules)', () => {
    expect(schema('Attachment').properties.filename.maxLength).toBeUndefined();
    expect(schema('Attachment').required).toEqual(['filename', 'content', 'content_type', 'content_id']);
    expect(schema('Attachment').properties.content_id.pattern).toBeUndefined();
    // Optional proto fields are absent until set; every other field is always in the answer.
    expect(schema('BatchJob').required).not.toContain('completed_at');
    expect(schema('Email').required).toContain('message_id');
  });

  it("gives the vocabularies as enums and the management API's limits", () => {
    expect(body('patch', '/v1/mail/admin/accounts/{id}').properties.status.enum).toEqual([...ACCOUNT_STATUSES]);
    expect(body('patch', '/v1/mail/admin/accounts/{id}').properties.daily_quota.maximum).toBe(DAILY_QUOTA_MAX);
    expect(body('post', '/v1/mail/admin/accounts/{id}/api-keys').properties.permission.enum).toEqual([...PERMISSIONS]);
    expect(body('post', '/v1/mail/admin/accounts/{id}/webhooks').properties.events.items.enum).toEqual([
      ...EVENT_TYPES,
    ]);
    const pageSize = op('get', '/v1/mail/emails').parameters.find((p: S) => p.name === 'page_size');
    expect(pageSize.schema).toMatchObject({ type: 'integer', minimum: 0, maximum: LIMITS.pageSizeMax });
  });

  it('refuses NUL in every free-form request string: body fields, list items, map values, query and path parameters', () => {
    const strings: [string, S][] = [];
    const walk = (where: string, x: S): void => {
      if (x.$ref) {
        const name = (x.$ref as string).split('/').pop()!;
        if (name.endsWith('Input') || name.endsWith('Request')) walk(name, schema(name));
        return;
      }
      if (x.type === 'string' && !x.enum && !x.format) strings.push([where, x]);
      for (const [k, v] of Object.entries((x.properties ?? {}) as Record<string, S>)) walk(`${where}.${k}`, v);
      if (typeof x.items === 'object') walk(`${where}[]`, x.items);
      if (typeof x.additionalProperties === 'object') walk(`${where}{}`, x.additionalProperties);
    };
    for (const [method, path, o] of ops()) {
      for (const p of o.parameters as S[]) walk(`${method} ${path} ${p.in}:${p.name}`, p.schema);
      // JSON, or the suppression import's text/csv.
      for (const [type, content] of Object.entries((o.requestBody?.content ?? {}) as Record<string, S>))
        walk(`${method} ${path} body (${type})`, content.schema);
    }
    expect(strings.length).toBeGreaterThan(40);
    for (const [where, x] of strings) {
      expect(x.pattern, where).toBeDefined();
      expect(new RegExp(x.pattern).test('a\0b'), where).toBe(false);
    }
  });

  it('gives the suppression import a text/csv body (its 415 for any other) and the export a text/csv answer', () => {
    const imported = op('post', '/v1/mail/suppressions/import');
    expect(Object.keys(imported.requestBody.content)).toEqual(['text/csv']);
    expect(imported.requestBody.content['text/csv'].schema).toMatchObject({
      type: 'string',
      maxLength: BODY_LIMITS.suppressionImport,
    });
    expect(new RegExp(imported.requestBody.content['text/csv'].schema.pattern).test('email,scope\nx@y.z\n')).toBe(true);
    expect(imported.responses[415]).toBeDefined();
    expect(imported.responses[200].content['application/json'].schema.$ref).toMatch(/ImportSuppressionsResponse$/);
    const exported = op('get', '/v1/mail/suppressions/export');
    expect(Object.keys(exported.responses[200].content)).toEqual(['text/csv']);
    expect(exported.responses[415]).toBeUndefined();
    expect(op('post', '/v1/mail/suppressions').tags).toEqual(['suppressions']);
  });

  it("states an inbound route's match and the list's paging, under the inbound tag, and the management API's", () => {
    const match = { type: 'string', minLength: 1, maxLength: MATCH_MAX_CHARS };
    expect(body('post', '/v1/mail/inbound/routes')).toMatchObject({ required: ['match'], properties: { match } });
    expect(body('post', '/v1/mail/admin/accounts/{id}/inbound/routes')).toMatchObject({ properties: { match } });
    const pattern = new RegExp(body('post', '/v1/mail/inbound/routes').properties.match.pattern);
    expect(['*@acme.test', 'support@in.acme.test'].every((m) => pattern.test(m))).toBe(true);
    expect(['acme.test', 'a@', '@acme.test', 'a\u0000@acme.test'].some((m) => pattern.test(m))).toBe(false);
    const list = op('get', '/v1/mail/inbound/routes');
    expect(list.parameters.find((p: S) => p.name === 'page_size').schema).toMatchObject({
      minimum: 0,
      maximum: LIMITS.pageSizeMax,
    });
    expect(list.responses[200].content['application/json'].schema.$ref).toMatch(/ListInboundRoutesResponse$/);
    expect(schema('InboundRoute').properties.created_at.format).toBe('date-time');
    for (const [method, path] of [
      ['post', '/v1/mail/inbound/routes'],
      ['get', '/v1/mail/inbound/routes'],
      ['delete', '/v1/mail/inbound/routes/{id}'],
    ])
      expect(op(method!, path!).tags).toEqual(['inbound']);
    expect(op('delete', '/v1/mail/admin/inbound/routes/{id}').tags).toEqual(['admin']);
    expect(op('get', '/v1/mail/admin/accounts/{id}/inbound/routes').operationId).toBe('listAccountInboundRoutes');
    expect(Object.keys(op('post', '/v1/mail/inbound/routes').responses[200].links)).toEqual(['deleteInboundRoute']);
  });

  it("gives the account's own domains and webhooks the management API's rules, under the account tag, with ids of their own", () => {
    for (const [method, path] of [
      ['get', '/v1/mail/account'],
      ['post', '/v1/mail/domains'],
      ['get', '/v1/mail/domains/{id}'],
      ['delete', '/v1/mail/domains/{id}'],
      ['post', '/v1/mail/webhooks'],
      ['get', '/v1/mail/webhooks/{id}/deliveries'],
      ['post', '/v1/mail/webhook-deliveries/{id}/resend'],
    ])
      expect(op(method!, path!).tags, `${method} ${path}`).toEqual(['account']);
    // The same request rules under the public request's name and the management API's.
    expect(body('post', '/v1/mail/domains')).toMatchObject({
      required: ['name'],
      properties: { name: { minLength: 1 } },
    });
    expect(body('post', '/v1/mail/admin/accounts/{id}/domains')).toMatchObject({
      required: ['name'],
      properties: { name: { minLength: 1 } },
    });
    expect(body('post', '/v1/mail/admin/accounts/{id}/domains').properties.account_id).toBeUndefined();
    for (const path of ['/v1/mail/webhooks', '/v1/mail/admin/accounts/{id}/webhooks'])
      expect(body('post', path)).toMatchObject({
        required: ['url', 'events'],
        properties: { events: { minItems: 1, items: { enum: [...EVENT_TYPES] } } },
      });
    for (const path of [
      '/v1/mail/domains',
      '/v1/mail/webhooks',
      '/v1/mail/admin/accounts/{id}/domains',
      '/v1/mail/admin/accounts/{id}/webhooks',
    ]) {
      const pageSize = op('get', path).parameters.find((p: S) => p.name === 'page_size');
      expect(pageSize?.schema, path).toMatchObject({ minimum: 0, maximum: LIMITS.pageSizeMax });
    }
    expect(schema('ListDomainsResponse').required).toEqual(['domains', 'total']);
    // An admin operation whose RPC the public API has too is suffixed; its links stay within the management API.
    expect(op('post', '/v1/mail/domains').operationId).toBe('createDomain');
    expect(op('post', '/v1/mail/admin/accounts/{id}/domains').operationId).toBe('createDomainAdmin');
    expect(op('get', '/v1/mail/admin/accounts/{id}').operationId).toBe('getAccountAdmin');
    expect(op('get', '/v1/mail/account').operationId).toBe('getAccount');
    expect(Object.keys(op('post', '/v1/mail/admin/accounts').responses[200].links)).toEqual(
      expect.arrayContaining(['getAccountAdmin', 'createDomainAdmin', 'createWebhookAdmin', 'listDomainsAdmin']),
    );
    expect(Object.keys(op('post', '/v1/mail/admin/accounts/{id}/domains').responses[200].links)).toContain(
      'verifyDomainAdmin',
    );
    expect(Object.keys(op('post', '/v1/mail/domains').responses[200].links)).toEqual([
      'getDomain',
      'verifyDomain',
      'updateDomain',
      'rotateDomainDkim',
      'deleteDomain',
    ]);
    expect(op('post', '/v1/mail/domains/{id}/verify').description).toMatch(/force: true is a 403/);
    expect(op('post', '/v1/mail/admin/domains/{id}/verify').description ?? '').not.toMatch(/403/);
  });

  it("states the erasure request's required address and its limits", () => {
    expect(body('post', '/v1/mail/admin/recipients/erase')).toMatchObject({
      required: ['address'],
      properties: { address: { type: 'string', minLength: 1 } },
    });
  });

  it('renders google.protobuf.Struct as a free-form object', () => {
    expect(schema('EmailEvent').properties.data).toEqual({ type: 'object', additionalProperties: true });
    expect(JSON.stringify(doc)).not.toContain('"fields"');
  });

  it('has the Idempotency-Key header on exactly the three sends, and 409 there, on a DKIM rotation, on erasing a pending email, on a taken template alias and on a taken inbound route match only', () => {
    const withKey = ops()
      .filter(([, , o]) => o.parameters.some((p: S) => p.in === 'header' && p.name === 'Idempotency-Key'))
      .map(([, , o]) => o.operationId);
    expect(withKey.sort()).toEqual(['scheduleEmail', 'sendBatch', 'sendEmail']);
    expect(
      ops()
        .filter(([, , o]) => o.responses[409])
        .map(([, , o]) => o.operationId)
        .sort(),
    ).toEqual([
      'createAccountInboundRoute',
      'createAccountTemplate',
      'createInboundRoute',
      'createTemplate',
      'eraseEmail',
      'rotateDomainDkim',
      'rotateDomainDkimAdmin',
      'scheduleEmail',
      'sendBatch',
      'sendEmail',
      'updateAccountTemplate',
      'updateTemplate',
    ]);
    // These 409s carry no Retry-After: only the request id every answer has (and the key's rate on the public API).
    expect(
      Object.keys(ops().find(([, , o]) => o.operationId === 'rotateDomainDkimAdmin')![2].responses[409].headers),
    ).toEqual(['X-Request-Id']);
    expect(
      Object.keys(ops().find(([, , o]) => o.operationId === 'rotateDomainDkim')![2].responses[409].headers),
    ).toEqual(['X-Request-Id', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']);
    expect(Object.keys(ops().find(([, , o]) => o.operationId === 'eraseEmail')![2].responses[409].headers)).toEqual([
      'X-Request-Id',
    ]);
  });

  it('documents the X-Request-Id header on every answer of every operation', () => {
    for (const [, , o] of ops()) {
      for (const answer of Object.values(o.responses as Record<string, S>))
        expect(answer.headers['X-Request-Id']).toMatchObject({ required: true });
    }
  });
});

describe('the OpenAPI document', () => {
  it('documents every answer in {error, message}, the rate-limit headers and the right security scheme', () => {
    for (const [method, path, o] of ops()) {
      const admin = path.startsWith('/v1/mail/admin/');
      const where = `${method} ${path}`;
      expect(o.security, where).toEqual([{ [admin ? 'adminToken' : 'apiKey']: [] }]);
      const expected = ['200', '400', '401', '404', '503'];
      if (!admin) expected.push('403', '429');
      if (o.requestBody) expected.push('413');
      if (path.includes('{id}')) expected.push('414');
      for (const status of expected) expect(o.responses[status], `${where} ${status}`).toBeDefined();
      for (const [status, r] of Object.entries(o.responses as Record<string, S>)) {
        if (status !== '200')
          expect(r.content['application/json'].schema, `${where} ${status}`).toEqual({
            $ref: '#/components/schemas/Error',
          });
      }
      if (!admin) {
        expect(o.responses[200].headers['RateLimit-Remaining'].required, where).toBe(true);
        expect(o.responses[429].headers['Retry-After'].required, where).toBe(true);
      }
    }
    expect(schema('Error')).toMatchObject({ required: ['error'], additionalProperties: false });
  });

  it('has unique operation ids and links that name existing operations', () => {
    const ids = ops().map(([, , o]) => o.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const [, , o] of ops()) {
      for (const link of Object.values((o.responses[200].links ?? {}) as Record<string, S>))
        expect(ids).toContain(link.operationId);
    }
  });
});
