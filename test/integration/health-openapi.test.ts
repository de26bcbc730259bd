import { beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../helpers/admin-fixtures.js';
import { call, validEmail } from '../helpers/http.js';
import { useStack } from '../helpers/use-stack.js';

const stack = useStack();
let root: string;
beforeAll(async () => {
  root = stack.api.replace(/\/v1\/mail$/, '');
});

describe('health and metrics', () => {
  it('GET /healthz is 200 without credentials', async () => {
    const res = await call('GET', `${root}/healthz`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('GET /readyz is 200 when the database and Temporal answer', async () => {
    const res = await call('GET', `${root}/readyz`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready' });
  });

  it('GET /metrics is Prometheus text counting REST requests by route and status', async () => {
    expect((await call('GET', `${stack.api}/emails`, { token: stack.apiKey })).status).toBe(200);
    expect((await call('GET', `${stack.api}/emails`)).status).toBe(401);
    const res = await fetch(`${root}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toContain('# TYPE mailer_http_requests_total counter');
    expect(text).toMatch(
      /^mailer_http_requests_total\{method="GET",route="\/v1\/mail\/emails",status="200"\} [1-9]\d*$/m,
    );
    expect(text).toMatch(
      /^mailer_http_requests_total\{method="GET",route="\/v1\/mail\/emails",status="401"\} [1-9]\d*$/m,
    );
    expect(text).toContain('mailer_http_request_duration_seconds_bucket');
  });
});

/** The ten operations of the spec. */
const EMAIL_OPERATIONS = [
  ['post', '/v1/mail/emails'],
  ['post', '/v1/mail/emails/schedule'],
  ['get', '/v1/mail/emails/scheduled'],
  ['get', '/v1/mail/emails/scheduled/{id}'],
  ['delete', '/v1/mail/emails/scheduled/{id}'],
  ['post', '/v1/mail/emails/batch'],
  ['get', '/v1/mail/emails/batch'],
  ['get', '/v1/mail/emails/batch/{id}'],
  ['get', '/v1/mail/emails'],
  ['get', '/v1/mail/emails/{id}'],
] as const;

/** The operations of the management API. */
const ADMIN_OPERATIONS = [
  ['post', '/v1/mail/admin/accounts'],
  ['get', '/v1/mail/admin/accounts/{id}'],
  ['patch', '/v1/mail/admin/accounts/{id}'],
  ['post', '/v1/mail/admin/accounts/{id}/domains'],
  ['get', '/v1/mail/admin/accounts/{id}/domains'],
  ['post', '/v1/mail/admin/domains/{id}/verify'],
  ['patch', '/v1/mail/admin/domains/{id}'],
  ['post', '/v1/mail/admin/accounts/{id}/api-keys'],
  ['get', '/v1/mail/admin/accounts/{id}/api-keys'],
  ['delete', '/v1/mail/admin/api-keys/{id}'],
  ['post', '/v1/mail/admin/accounts/{id}/webhooks'],
  ['get', '/v1/mail/admin/accounts/{id}/webhooks'],
  ['delete', '/v1/mail/admin/webhooks/{id}'],
  ['post', '/v1/mail/admin/webhooks/{id}/verify'],
] as const;

describe('GET /v1/mail/openapi.json', () => {
  type Doc = {
    openapi: string;
    paths: Record<string, Record<string, { parameters?: { name: string; in: string }[]; requestBody?: unknown }>>;
    components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
  };
  let doc: Doc;
  beforeAll(async () => {
    const res = await call<Doc>('GET', `${stack.api}/openapi.json`);
    expect(res.status).toBe(200);
    doc = res.body;
  });

  it('is an OpenAPI 3 document with the ten operations of the spec', () => {
    expect(doc.openapi).toMatch(/^3\./);
    for (const [method, path] of EMAIL_OPERATIONS) expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    // Beside them under /emails: one email's events (CONTRACT.md "Stats and timelines").
    const emailOps = Object.entries(doc.paths)
      .filter(([p]) => p.startsWith('/v1/mail/emails') && p !== '/v1/mail/emails/{id}/events')
      .flatMap(([p, m]) => Object.keys(m).map((k) => `${k} ${p}`));
    expect(emailOps).toHaveLength(10);
    expect(Object.keys(doc.paths['/v1/mail/emails/{id}/events'] ?? {})).toEqual(['get']);
  });

  it('has the management API paths', () => {
    for (const [method, path] of ADMIN_OPERATIONS) expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
  });

  it("names fields and query parameters with the spec's snake_case JSON names", () => {
    const props = (name: string) => Object.keys(doc.components.schemas[name]?.properties ?? {});
    expect(props('Email')).toEqual(
      expect.arrayContaining([
        'id',
        'message_id',
        'from',
        'to',
        'cc',
        'bcc',
        'reply_to',
        'subject',
        'html',
        'text',
        'status',
        'mal_status',
        'created_at',
        'headers',
        'tags',
        'attachments',
        'job_type',
        'job_id',
        'stream',
        'topic',
      ]),
    );
    expect(props('EmailSummary').sort()).toEqual([
      'created_at',
      'from',
      'id',
      'status',
      'stream',
      'subject',
      'to',
      'topic',
    ]);
    expect(props('Attachment').sort()).toEqual(['content', 'content_id', 'content_type', 'filename']);
    expect(props('SendEmailResponse').sort()).toEqual(['id', 'message_id', 'status']);
    expect(props('ScheduledEmail')).toEqual(
      expect.arrayContaining(['id', 'from', 'to', 'subject', 'scheduled_at', 'status', 'created_at', 'attempts']),
    );
    expect(props('BatchJob')).toEqual(
      expect.arrayContaining([
        'job_id',
        'total_count',
        'sent_count',
        'failed_count',
        'status',
        'created_at',
        'completed_at',
      ]),
    );
    expect(props('ListEmailsResponse').sort()).toEqual(['data', 'total']);
    expect(props('ListScheduledEmailsResponse').sort()).toEqual(['scheduled_emails', 'total_count']);
    expect(props('Error')).toEqual(expect.arrayContaining(['error', 'message']));

    const sendBody = (
      doc.paths['/v1/mail/emails']!.post!.requestBody as {
        content: Record<string, { schema: { properties: Record<string, unknown> } }>;
      }
    ).content['application/json']!.schema.properties;
    expect(Object.keys(sendBody).sort()).toEqual([
      'attachments',
      'bcc',
      'cc',
      'from',
      'headers',
      'html',
      'reply_to',
      'stream',
      'subject',
      'tags',
      'template',
      'text',
      'to',
      'topic',
    ]);
    const versionParams = doc.paths['/v1/mail/templates/{id}/versions/{version}']!.get!.parameters!;
    expect(versionParams.map((p) => `${p.in}:${p.name}`)).toEqual(['path:id', 'path:version']);

    const listParams = doc.paths['/v1/mail/emails']!.get!.parameters!.map((p) => `${p.in}:${p.name}`).sort();
    expect(listParams).toEqual([
      'query:job_id',
      'query:job_type',
      'query:page',
      'query:page_size',
      'query:status',
      'query:stream',
    ]);
    const scheduledParams = doc.paths['/v1/mail/emails/scheduled']!.get!.parameters!.map((p) => p.name).sort();
    expect(scheduledParams).toEqual(['limit', 'page', 'status']);
    const scheduleBody = (
      doc.paths['/v1/mail/emails/schedule']!.post!.requestBody as {
        content: Record<string, { schema: { properties: Record<string, unknown> } }>;
      }
    ).content['application/json']!.schema.properties;
    expect(Object.keys(scheduleBody)).toContain('scheduled_at');

    // No camelCase leaked anywhere into the schemas.
    for (const [name, schema] of Object.entries(doc.components.schemas)) {
      for (const prop of Object.keys(schema.properties ?? {}))
        expect(prop, `${name}.${prop}`).toMatch(/^[a-z][a-z0-9_]*$/);
    }
  });

  it('is served without credentials', async () => {
    const res = await fetch(`${stack.api}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
  });
});

describe('unknown routes', () => {
  it.each([
    ['GET', '/v1/mail/nothing-here'],
    ['POST', '/v1/mail/emails/em_x/resend'],
    ['GET', '/v2/mail/emails'],
    ['GET', '/v1/mail/admin/nothing'],
  ])('%s %s is 404 {error: "not found", message}', async (method, path) => {
    const res = await call(method, `${root}${path}`, { token: stack.apiKey });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not found', message: expect.stringContaining(path) });
  });

  it('a known path with a method it does not answer is 405 with Allow', async () => {
    const res = await call('PUT', `${root}/v1/mail/emails`, { token: stack.apiKey });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, POST');
    expect(res.body).toEqual({ error: 'method not allowed', message: expect.stringContaining('/v1/mail/emails') });
  });
});

describe('scheduled and batch endpoints: credentials and permissions first', () => {
  const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();
  const jobEndpoints = (): { method: string; path: string; body?: unknown }[] => [
    { method: 'POST', path: '/emails/schedule', body: validEmail({ scheduled_at: inAnHour() }) },
    { method: 'GET', path: '/emails/scheduled' },
    { method: 'GET', path: '/emails/scheduled/sch_01jzzzzzzzzzzzzzzzzzzzzzzz' },
    { method: 'DELETE', path: '/emails/scheduled/sch_01jzzzzzzzzzzzzzzzzzzzzzzz' },
    { method: 'POST', path: '/emails/batch', body: { emails: [validEmail()] } },
    { method: 'GET', path: '/emails/batch' },
    { method: 'GET', path: '/emails/batch/bat_01jzzzzzzzzzzzzzzzzzzzzzzz' },
  ];

  it('authenticate first: no key is 401, a wrong key is 401', async () => {
    for (const e of jobEndpoints()) {
      for (const token of [undefined, `mk_${'B'.repeat(43)}`]) {
        const res = await call(e.method, `${stack.api}${e.path}`, {
          ...(token ? { token } : {}),
          ...(e.body !== undefined ? { body: e.body } : {}),
        });
        expect(res.status, `${e.method} ${e.path}`).toBe(401);
        expect(res.body).toEqual({ error: 'unauthorized', message: 'Invalid or missing API key' });
      }
    }
  });

  it('a read_only key may not schedule, cancel or batch (403) but may read (200, or 404 for an unknown id)', async () => {
    const { key } = await createKey(stack, stack.accountId, 'read_only');
    for (const e of jobEndpoints()) {
      const res = await call(e.method, `${stack.api}${e.path}`, {
        token: key,
        ...(e.body !== undefined ? { body: e.body } : {}),
      });
      const expected = e.method !== 'GET' ? 403 : e.path.includes('_01j') ? 404 : 200;
      expect(res.status, `${e.method} ${e.path}`).toBe(expected);
      if (expected === 403) expect(res.body.error).toBe('permission denied');
    }
  });
});
