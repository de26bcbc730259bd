import grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSql, type Sql } from '../../src/db/sql.js';
import { PUBLIC_ROUTES, type RestRoute } from '../../src/http/rest-routes.js';
import { admin, createKey, createSender } from '../helpers/admin-fixtures.js';
import { bearer, failed, rpc, useGrpcClients } from '../helpers/grpc-client.js';
import { call, eventually, validEmail, type JsonResponse } from '../helpers/http.js';
import { insertInbound } from '../helpers/inbound-rows.js';
import { useStack } from '../helpers/use-stack.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * Isolation between accounts on every route of the public API (issue 27, item 5): account B owns one of every
 * kind of resource; account A's key of permission `all` names each of them on every route with a path parameter
 * and is answered 404, in the words an id that never existed gets (not 403: that would tell the id exists), and
 * B's resource reads back unchanged with B's key. Every list A reads shows nothing of B. The table below has an
 * entry per route with a path parameter, and a route added without one fails the completeness check, so a new
 * route cannot skip the question. Over gRPC, a few representative RPCs with B's ids and A's key are NOT_FOUND.
 */
const stack = useStack({ MAILER_WEBHOOK_ALLOW_PRIVATE: '1' });
const clients = useGrpcClients(stack);

type Obj = Record<string, unknown>;
type Sender = Awaited<ReturnType<typeof createSender>>;

/** B's resources, one of each kind a public path can name. */
interface World {
  a: Sender;
  b: Sender;
  /** B's domain's name. */
  bDomain: string;
  email: string;
  scheduled: string;
  batch: string;
  template: string;
  templateAlias: string;
  suppression: string;
  inboundRoute: string;
  inboundEmail: string;
  apiKey: string;
  webhook: string;
  delivery: string;
}

type Kind =
  | 'email'
  | 'scheduled'
  | 'batch'
  | 'template'
  | 'suppression'
  | 'inboundRoute'
  | 'inboundEmail'
  | 'domain'
  | 'webhook'
  | 'delivery'
  | 'apiKey';

let sql: Sql;
let receiver: WebhookReceiver;
let w: World;

const get = async (path: string, key: string): Promise<Obj> => {
  const res = await call<Obj>('GET', `${stack.api}${path}`, { token: key });
  expect(res.status, `GET ${path} with B's key: ${res.text}`).toBe(200);
  return res.body;
};
const one = (list: unknown, id: string): unknown => (list as Obj[]).find((x) => x.id === id);
/** Leaves out what changes by itself (live DNS checks, key usage), not by a request. */
const without = (o: unknown, ...keys: string[]) =>
  Object.fromEntries(Object.entries(o as Obj).filter(([k]) => !keys.includes(k)));

/** Each kind of B's resource as B's key reads it: what must be the same before and after A's request. */
const READ_BACK: Record<Kind, (w: World) => Promise<unknown>> = {
  email: async (w) => [await get(`/emails/${w.email}`, w.b.key), await get(`/emails/${w.email}/events`, w.b.key)],
  scheduled: (w) => get(`/emails/scheduled/${w.scheduled}`, w.b.key),
  batch: (w) => get(`/emails/batch/${w.batch}`, w.b.key),
  template: async (w) => [
    await get(`/templates/${w.template}`, w.b.key),
    await get(`/templates/${w.template}/versions/1`, w.b.key),
  ],
  suppression: (w) => get(`/suppressions?email=${encodeURIComponent(w.suppression)}`, w.b.key),
  inboundRoute: async (w) => one((await get('/inbound/routes', w.b.key)).routes, w.inboundRoute) ?? 'gone',
  inboundEmail: (w) => get(`/inbound/emails/${w.inboundEmail}`, w.b.key),
  domain: async (w) =>
    without(await get(`/domains/${w.b.domainId}`, w.b.key), 'dns_checked_at', 'dns_failing_since', 'dmarc'),
  webhook: async (w) => one((await get('/webhooks', w.b.key)).webhooks, w.webhook) ?? 'gone',
  delivery: async (w) => one((await get(`/webhooks/${w.webhook}/deliveries`, w.b.key)).deliveries, w.delivery),
  apiKey: async (w) => {
    const key = one((await get('/api-keys', w.b.key)).api_keys, w.apiKey);
    return key === undefined ? 'gone' : without(key, 'usage', 'last_used_at');
  },
};

/** An id of each kind that no account has: its 404 is the words B's id must get too. */
const UNKNOWN: Record<Kind, string> = {
  email: 'em_01jv0000000000000000000000',
  scheduled: 'sch_01jv0000000000000000000000',
  batch: 'bat_01jv0000000000000000000000',
  template: 'tpl_01jv0000000000000000000000',
  suppression: 'nobody-suppressed@example.net',
  inboundRoute: 'rt_01jv0000000000000000000000',
  inboundEmail: 'in_01jv0000000000000000000000',
  domain: 'dom_01jv0000000000000000000000',
  webhook: 'wh_01jv0000000000000000000000',
  delivery: 'whd_01jv0000000000000000000000',
  apiKey: 'key_01jv0000000000000000000000',
};

interface Entry {
  /** The kind of B's resource the path's `:id` names. */
  kind: Kind;
  /** Path parameters besides `:id`. */
  params?: Record<string, string>;
  /** A body that B's own key could send: A's refusal must come from the id, not the body. */
  body?: unknown;
}

/** B's id of each kind. */
const idOf = (w: World, kind: Kind): string =>
  ({
    email: w.email,
    scheduled: w.scheduled,
    batch: w.batch,
    template: w.template,
    suppression: w.suppression,
    inboundRoute: w.inboundRoute,
    inboundEmail: w.inboundEmail,
    domain: w.b.domainId,
    webhook: w.webhook,
    delivery: w.delivery,
    apiKey: w.apiKey,
  })[kind];

const hourAgo = () => new Date(Date.now() - 3_600_000).toISOString();

/** Every public route with a path parameter, by `METHOD path`: which of B's resources it is tried with. */
const TABLE: Record<string, Entry> = {
  'GET /emails/scheduled/:id': { kind: 'scheduled' },
  'DELETE /emails/scheduled/:id': { kind: 'scheduled' },
  'GET /emails/batch/:id': { kind: 'batch' },
  'GET /emails/:id': { kind: 'email' },
  'GET /emails/:id/events': { kind: 'email' },
  'GET /templates/:id': { kind: 'template' },
  'PATCH /templates/:id': { kind: 'template', body: { subject: 'changed by another account' } },
  'GET /templates/:id/versions/:version': { kind: 'template', params: { version: '1' } },
  'POST /templates/:id/publish': { kind: 'template', body: { version: 1 } },
  'DELETE /templates/:id': { kind: 'template' },
  'POST /templates/:id/render': { kind: 'template', body: { variables: {} } },
  'DELETE /suppressions/:id': { kind: 'suppression' },
  'DELETE /inbound/routes/:id': { kind: 'inboundRoute' },
  'GET /inbound/emails/:id': { kind: 'inboundEmail' },
  'GET /inbound/emails/:id/raw': { kind: 'inboundEmail' },
  'GET /inbound/emails/:id/attachments/:n': { kind: 'inboundEmail', params: { n: '0' } },
  'GET /domains/:id': { kind: 'domain' },
  'DELETE /domains/:id': { kind: 'domain' },
  'PATCH /domains/:id': { kind: 'domain', body: { open_tracking: true, click_tracking: true } },
  'POST /domains/:id/verify': { kind: 'domain', body: {} },
  'POST /domains/:id/dkim/rotate': { kind: 'domain', body: {} },
  'DELETE /webhooks/:id': { kind: 'webhook' },
  'POST /webhooks/:id/verify': { kind: 'webhook', body: {} },
  'POST /webhooks/:id/rotate-secret': { kind: 'webhook', body: { overlap_seconds: 60 } },
  'POST /webhooks/:id/enable': { kind: 'webhook', body: {} },
  'POST /webhooks/:id/resend': { kind: 'webhook', body: { from: hourAgo() } },
  'GET /webhooks/:id/deliveries': { kind: 'webhook' },
  'POST /webhook-deliveries/:id/resend': { kind: 'delivery', body: {} },
  'DELETE /api-keys/:id': { kind: 'apiKey' },
};

const routeKey = (r: RestRoute) => `${r.method} ${r.path}`;
const withPathParameter = PUBLIC_ROUTES.filter((r) => r.path.includes(':'));

function urlOf(route: RestRoute, id: string, entry: Entry): string {
  return route.path.replace(/:(\w+)/g, (_, name: string) =>
    encodeURIComponent(name === 'id' ? id : (entry.params?.[name] ?? '')),
  );
}

async function ask(route: RestRoute, id: string, entry: Entry, key: string): Promise<JsonResponse> {
  return call(route.method, `${stack.api}${urlOf(route, id, entry)}`, {
    token: key,
    ...(entry.body !== undefined ? { body: entry.body } : {}),
  });
}

beforeAll(async () => {
  sql = createSql(stack.databaseUrl, { max: 2 });
  receiver = await startWebhookReceiver();
  const a = await createSender(stack, 'isolation-a', 'isolation-a.example');
  const b = await createSender(stack, 'isolation-b', 'isolation-b.example');
  const bKey = (method: string, path: string, body?: unknown) =>
    call<Obj>(method, `${stack.api}${path}`, { token: b.key, ...(body !== undefined ? { body } : {}) });
  const made = async (res: Promise<JsonResponse<Obj>>, field = 'id'): Promise<string> => {
    const r = await res;
    expect(r.status, r.text).toBe(200);
    return r.body[field] as string;
  };

  // B's webhook first, so that B's email makes a delivery of it.
  const webhook = await made(
    admin(stack, 'POST', `/accounts/${b.accountId}/webhooks`, { url: `${receiver.url}/b`, events: ['delivery'] }),
  );
  // To a recipient domain of its own and with a tag: what A's stats by recipient domain or tag would show of it.
  const email = await made(
    bKey(
      'POST',
      '/emails',
      validEmail({ from: 'b@isolation-b.example', to: ['x@isolation-b-rcpt.example'], tags: { campaign: 'isob' } }),
    ),
  );
  const scheduled = await made(
    bKey('POST', '/emails/schedule', {
      ...validEmail({ from: 'b@isolation-b.example' }),
      scheduled_at: new Date(Date.now() + 3_600_000).toISOString(),
    }),
  );
  const batch = await made(
    bKey('POST', '/emails/batch', { emails: [validEmail({ from: 'b@isolation-b.example' })] }),
    'job_id',
  );
  const templateAlias = 'isolation-b-welcome';
  const template = await made(
    bKey('POST', '/templates', { name: 'B welcome', alias: templateAlias, subject: 'Hi {{name}}', text: 'B' }),
  );
  const suppression = 'isolation-b-suppressed@example.net';
  await made(bKey('POST', '/suppressions', { email: suppression }), 'email_address');
  const inboundRoute = await made(bKey('POST', '/inbound/routes', { match: 'in@isolation-b.example' }));
  const inbound = await insertInbound(sql, {
    accountId: b.accountId,
    raw: Buffer.from('From: x@elsewhere.example\r\nTo: in@isolation-b.example\r\nSubject: B\r\n\r\nB\r\n'),
    subject: 'B',
    attachments: [{ filename: 'b.txt', contentType: 'text/plain', bytes: Buffer.from('B') }],
  });
  const apiKey = (await createKey(stack, b.accountId, 'read_only')).id;

  // What can still move by itself is settled first: the email delivered, its webhook delivery done, the batch done.
  await eventually(async () => {
    const events = (await get(`/emails/${email}/events`, b.key)).events as Obj[];
    return events.some((e) => e.event === 'delivery');
  });
  const delivery = await eventually(async () => {
    const res = await admin<{ deliveries: Obj[] }>(stack, 'GET', `/webhooks/${webhook}/deliveries`);
    const done = res.body.deliveries.find((d) => d.status === 'succeeded');
    return done?.id as string | undefined;
  });
  await eventually(async () => (await get(`/emails/batch/${batch}`, b.key)).status === 'completed');

  // A has resources of its own, so that its lists are not trivially empty.
  await made(
    call('POST', `${stack.api}/emails`, { token: a.key, body: validEmail({ from: 'a@isolation-a.example' }) }),
  );
  await made(call('POST', `${stack.api}/templates`, { token: a.key, body: { name: 'A', subject: 'A', text: 'A' } }));

  w = {
    a,
    b,
    bDomain: 'isolation-b.example',
    email,
    scheduled,
    batch,
    template,
    templateAlias,
    suppression,
    inboundRoute,
    inboundEmail: inbound.id,
    apiKey,
    webhook,
    delivery,
  };
}, 120_000);

afterAll(async () => {
  await sql?.end();
  await receiver?.close();
});

describe('isolation between accounts, route by route', () => {
  it('has an entry for every public route with a path parameter, and none for a route that is not there', () => {
    const missing = withPathParameter.map(routeKey).filter((k) => !(k in TABLE));
    expect(missing, 'routes with a path parameter and no entry in TABLE').toEqual([]);
    // And no entry outlives its route (a renamed path would otherwise leave its new name to the check above alone).
    const stale = Object.keys(TABLE).filter((k) => !withPathParameter.some((r) => routeKey(r) === k));
    expect(stale, 'entries of TABLE that name no public route').toEqual([]);
  });

  it.each(withPathParameter.filter((r) => routeKey(r) in TABLE).map((r) => [routeKey(r), r] as const))(
    "%s with B's id and A's key: 404 in the words of an unknown id, and B's resource unchanged",
    async (key, route) => {
      const entry = TABLE[key]!;
      const id = idOf(w, entry.kind);
      const before = await READ_BACK[entry.kind](w);
      const hooksBefore = receiver.received.length;

      const res = await ask(route, id, entry, w.a.key);
      expect(res.status, `${key}: ${res.text}`).toBe(404);
      const unknown = await ask(route, UNKNOWN[entry.kind], entry, w.a.key);
      expect(unknown.status, `${key} with an unknown id: ${unknown.text}`).toBe(404);
      expect(res.body.error).toBe('not found');
      // The same words as for an id that never was, so nothing tells "another account's" from "none".
      expect(JSON.stringify(res.body).replaceAll(id, UNKNOWN[entry.kind])).toBe(JSON.stringify(unknown.body));

      expect(await READ_BACK[entry.kind](w), `${key}: B's ${entry.kind} changed`).toEqual(before);
      // Nothing was sent to B's webhook on A's behalf (a verify, a resend).
      expect(receiver.received.length).toBe(hooksBefore);
      // The id is a real one: B's own key reads it (a read only: B's own change would change it).
      if (route.method === 'GET') {
        const mine = await ask(route, id, entry, w.b.key);
        expect(mine.status, `${key} with B's own key: ${mine.text}`).toBe(200);
      }
    },
  );

  it("a template alias of B's names nothing for A", async () => {
    const res = await call('GET', `${stack.api}/templates/${w.templateAlias}`, { token: w.a.key });
    expect(res.status).toBe(404);
    expect((await call('GET', `${stack.api}/templates/${w.templateAlias}`, { token: w.b.key })).status).toBe(200);
  });

  it("A's lists show nothing of B", async () => {
    const markers = [
      w.b.accountId,
      w.bDomain,
      w.b.domainId,
      w.b.keyId,
      w.email,
      w.scheduled,
      w.batch,
      w.template,
      w.templateAlias,
      w.suppression,
      w.inboundRoute,
      w.inboundEmail,
      w.apiKey,
      w.webhook,
      w.delivery,
      'isolation-b-rcpt.example',
      'isob',
    ];
    const lists = PUBLIC_ROUTES.filter((r) => r.method === 'GET' && !r.path.includes(':')).map((r) => r.path);
    expect(lists.length).toBeGreaterThan(5);
    // The groupings and pages that would show B's things if they leaked: its domains, recipients' domain, tag.
    const variants = [
      ...['domain', 'recipient_domain', 'tag', 'stream'].map((g) => `/stats?group_by=${g}`),
      '/events?limit=1000',
      '/emails?page_size=100',
      '/suppressions?email=isolation-b',
    ];
    for (const path of [...lists, ...variants]) {
      const res = await call('GET', `${stack.api}${path}`, { token: w.a.key });
      expect(res.status, `GET ${path}: ${res.text}`).toBe(200);
      for (const marker of markers) expect(res.text, `GET ${path} shows B's ${marker}`).not.toContain(marker);
    }
    // The same lists with B's key do show B's resources: the markers are what those lists would show.
    const ofB = await call('GET', `${stack.api}/emails`, { token: w.b.key });
    expect(ofB.text).toContain(w.email);
    const statsOfB = await call('GET', `${stack.api}/stats?group_by=recipient_domain`, { token: w.b.key });
    expect(statsOfB.text).toContain('isolation-b-rcpt.example');
    const tagsOfB = await call('GET', `${stack.api}/stats?group_by=tag`, { token: w.b.key });
    expect(tagsOfB.text).toContain('isob');
  });
});

describe('isolation between accounts over gRPC', () => {
  it("answers NOT_FOUND to A's key naming B's ids", async () => {
    const cases: [string, Obj][] = [
      ['GetEmail', { id: w.email }],
      ['ListEmailEvents', { id: w.email }],
      ['GetScheduledEmail', { id: w.scheduled }],
      ['CancelScheduledEmail', { id: w.scheduled }],
      ['GetBatchJob', { id: w.batch }],
      ['GetTemplate', { id: w.template }],
      ['DeleteTemplate', { id: w.template }],
      ['DeleteInboundRoute', { id: w.inboundRoute }],
      ['GetInboundEmail', { id: w.inboundEmail }],
      ['GetDomain', { id: w.b.domainId }],
      ['UpdateDomain', { id: w.b.domainId, open_tracking: true }],
      ['DeleteWebhook', { id: w.webhook }],
      ['ListWebhookDeliveries', { id: w.webhook }],
      ['ResendWebhookDelivery', { id: w.delivery }],
      ['DeleteApiKey', { id: w.apiKey }],
    ];
    const kinds: Kind[] = [
      'email',
      'scheduled',
      'batch',
      'template',
      'inboundRoute',
      'inboundEmail',
      'domain',
      'webhook',
      'delivery',
      'apiKey',
    ];
    const before = await Promise.all(kinds.map((k) => READ_BACK[k](w)));
    for (const [method, req] of cases) {
      const err = failed(await rpc(clients.email, method, req, bearer(w.a.key)));
      expect(grpc.status[err.code], method).toBe('NOT_FOUND');
    }
    // Still B's, unchanged.
    expect(await Promise.all(kinds.map((k) => READ_BACK[k](w)))).toEqual(before);
  });
});
