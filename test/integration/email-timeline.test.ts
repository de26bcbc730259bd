import grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { admin, createKey, createSender } from '../helpers/admin-fixtures.js';
import { bearer, expectSameError, failed, ok, rpc, useGrpcClients } from '../helpers/grpc-client.js';
import { call, eventually, expectValidationError, validEmail } from '../helpers/http.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * CONTRACT.md "Stats and timelines" against the real service: one email's events (GET /emails/:id/events and
 * GET /events?email_id=), each as the feed shows it, confined to the key's account; the public template preview
 * (POST /template-preview) answering as the operator's; and an unknown query parameter refused on GET routes of
 * both APIs while every documented one is still taken.
 */
const stack = useStack();
const clients = useGrpcClients(stack);

type FeedEvent = { id: string; event: string; timestamp: string; email?: { id: string }; data: unknown };
type Feed = { events: FeedEvent[]; next_cursor: string };

afterEach(() => {
  stack.sink.beforeAccept = async () => {};
});

async function get<T>(path: string, key: string, status = 200): Promise<T> {
  const res = await call<T>('GET', `${stack.api}${path}`, { token: key });
  expect(res.status, `GET ${path}: ${res.text}`).toBe(status);
  return res.body;
}

/** Sends one email and waits until its `send` and `delivery` events are in the feed. */
async function sendSettled(key: string, from: string): Promise<string> {
  const res = await call<{ id: string }>('POST', `${stack.api}/emails`, { token: key, body: validEmail({ from }) });
  expect(res.status, res.text).toBe(200);
  await eventually(async () => {
    const { events } = await get<Feed>(`/events?email_id=${res.body.id}`, key);
    return events.length === 2;
  });
  return res.body.id;
}

describe('GET /emails/:id/events', () => {
  it("answers the email's events oldest first, each exactly as the feed shows it, to a key of any permission", async () => {
    const a = await createSender(stack, 'timeline-a', 'timeline-a.example');
    const first = await sendSettled(a.key, 'a@timeline-a.example');
    const second = await sendSettled(a.key, 'a@timeline-a.example');

    const { events } = await get<{ events: FeedEvent[] }>(`/emails/${first}/events`, a.key);
    expect(events.map((e) => e.event)).toEqual(['send', 'delivery']);
    expect(events.every((e) => e.email?.id === first)).toBe(true);
    expect(events[0]!.timestamp <= events[1]!.timestamp).toBe(true);
    // The very objects of GET /events, field for field.
    const feed = await get<Feed>('/events?limit=1000', a.key);
    expect(events).toEqual(feed.events.filter((e) => e.email?.id === first));
    expect(feed.events.some((e) => e.email?.id === second)).toBe(true);

    for (const permission of ['read_only', 'send_only'] as const) {
      const other = await createKey(stack, a.accountId, permission);
      expect(await get(`/emails/${first}/events`, other.key)).toEqual({ events });
    }
    // gRPC answers the same events.
    const overGrpc = ok(await rpc(clients.email, 'ListEmailEvents', { id: first }, bearer(a.key)));
    expect((overGrpc.events as { id: string }[]).map((e) => e.id)).toEqual(events.map((e) => e.id));
  });

  it('answers an email without events yet with an empty list, and its events once they are recorded', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    stack.sink.beforeAccept = () => held;
    const res = await call<{ id: string }>('POST', `${stack.api}/emails`, { token: stack.apiKey, body: validEmail() });
    expect(res.status, res.text).toBe(200);
    const id = res.body.id;
    expect(await get(`/emails/${id}/events`, stack.apiKey)).toEqual({ events: [] });
    expect(await get(`/events?email_id=${id}`, stack.apiKey)).toEqual({ events: [], next_cursor: '' });
    release();
    await eventually(async () => {
      const { events } = await get<{ events: FeedEvent[] }>(`/emails/${id}/events`, stack.apiKey);
      return events.map((e) => e.event).join() === 'send,delivery';
    });
  });

  it("answers another account's email 404 in the words of an unknown one, over REST and gRPC", async () => {
    const a = await createSender(stack, 'timeline-own', 'timeline-own.example');
    const b = await createSender(stack, 'timeline-other', 'timeline-other.example');
    const ofA = await sendSettled(a.key, 'a@timeline-own.example');

    const foreign = await call('GET', `${stack.api}/emails/${ofA}/events`, { token: b.key });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ error: 'not found', message: `email ${ofA} not found` });
    const unknown = await call('GET', `${stack.api}/emails/em_01jv0000000000000000000000/events`, { token: b.key });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'not found', message: 'email em_01jv0000000000000000000000 not found' });
    expectSameError(
      failed(await rpc(clients.email, 'ListEmailEvents', { id: ofA }, bearer(b.key))),
      grpc.status.NOT_FOUND,
      foreign.body as { error: string; message: string },
    );
    expect((await call('GET', `${stack.api}/emails/${ofA}/events`)).status).toBe(401);
  });
});

describe('GET /events?email_id=', () => {
  it("filters the feed to the email, with cursor, limit and type, and never shows another account's events", async () => {
    const a = await createSender(stack, 'filter-a', 'filter-a.example');
    const b = await createSender(stack, 'filter-b', 'filter-b.example');
    const mine = await sendSettled(a.key, 'a@filter-a.example');
    await sendSettled(a.key, 'a@filter-a.example');
    const ofB = await sendSettled(b.key, 'b@filter-b.example');

    const { events: timeline } = await get<{ events: FeedEvent[] }>(`/emails/${mine}/events`, a.key);
    const all = await get<Feed>(`/events?email_id=${mine}`, a.key);
    expect(all.events).toEqual(timeline);
    expect(all.next_cursor).toMatch(/^\d+-[0-9a-z]{26}$/);

    // One at a time with the cursor: the same events, then an empty page that keeps the cursor.
    const paged: FeedEvent[] = [];
    let cursor = '';
    for (;;) {
      const page = await get<Feed>(`/events?email_id=${mine}&limit=1&after=${cursor}`, a.key);
      if (page.events.length === 0) {
        expect(page.next_cursor).toBe(cursor);
        break;
      }
      expect(page.events).toHaveLength(1);
      paged.push(...page.events);
      cursor = page.next_cursor;
    }
    expect(paged).toEqual(timeline);
    expect((await get<Feed>(`/events?email_id=${mine}&type=delivery`, a.key)).events).toEqual(
      timeline.filter((e) => e.event === 'delivery'),
    );

    // Another account's email: 404 as GET /emails/:id, whatever the cursor; never its events.
    for (const query of [`email_id=${ofB}`, `email_id=${ofB}&after=${cursor}`, `email_id=${ofB}&type=send`]) {
      const res = await call('GET', `${stack.api}/events?${query}`, { token: a.key });
      expect(res.status, query).toBe(404);
      expect(res.body).toEqual({ error: 'not found', message: `email ${ofB} not found` });
    }
    await get('/events?email_id=em_nope', a.key, 404);

    // gRPC's ListEvents filters by its email_id the same way, and refuses another account's email alike.
    const overGrpc = ok(await rpc(clients.email, 'ListEvents', { email_id: mine }, bearer(a.key)));
    expect((overGrpc.events as { id: string }[]).map((e) => e.id)).toEqual(timeline.map((e) => e.id));
    const typed = ok(await rpc(clients.email, 'ListEvents', { email_id: mine, type: 'delivery' }, bearer(a.key)));
    expect((typed.events as { id: string }[]).map((e) => e.id)).toEqual(
      timeline.filter((e) => e.event === 'delivery').map((e) => e.id),
    );
    expectSameError(
      failed(await rpc(clients.email, 'ListEvents', { email_id: ofB }, bearer(a.key))),
      grpc.status.NOT_FOUND,
      { error: 'not found', message: `email ${ofB} not found` },
    );
  });
});

describe('POST /template-preview', () => {
  const content = {
    subject: 'Hallo {{name}}',
    html: '<p>{{#each items}}{{this}},{{/each}}</p>',
    variables: [{ name: 'items', default: ['a', 'b'] }],
    localizations: { de: { html: '<p>de {{name}}</p>' } },
    sample_variables: { name: 'Eva & Co' },
    locale: 'de-CH',
  };

  it("renders content not stored as the operator's preview does, with a key of permission all", async () => {
    const a = await createSender(stack, 'preview-a', 'preview-a.example');
    const res = await call('POST', `${stack.api}/template-preview`, { token: a.key, body: content });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ subject: 'Hallo Eva & Co', html: '<p>de Eva &amp; Co</p>', text: '' });
    const operator = await admin(stack, 'POST', `/accounts/${a.accountId}/template-preview`, content);
    expect(res.body).toEqual(operator.body);
    const plain = await call('POST', `${stack.api}/template-preview`, {
      token: a.key,
      body: { ...content, locale: '' },
    });
    expect(plain.body).toEqual({ subject: 'Hallo Eva & Co', html: '<p>a,b,</p>', text: '' });
    // Nothing stored.
    expect(await get(`/templates`, a.key)).toMatchObject({ total: 0 });
    // Over gRPC too.
    const overGrpc = ok(
      await rpc(
        clients.email,
        'PreviewTemplate',
        { subject: 'x {{y}}', text: '{{y}}!', sample_variables: { fields: { y: { stringValue: 'z' } } } },
        bearer(a.key),
      ),
    );
    expect(overGrpc).toEqual({ subject: 'x z', html: '', text: 'z!' });
  });

  it('refuses what a create or a render refuses, and keys that may not change templates', async () => {
    const a = await createSender(stack, 'preview-b', 'preview-b.example');
    const preview = (body: unknown, key = a.key) => call('POST', `${stack.api}/template-preview`, { token: key, body });
    expectValidationError(
      await preview({ subject: 'Hi {{name}}', text: 'x' }),
      'a required variable missing',
      /^variables\.name is required$/,
    );
    expectValidationError(
      await preview({ subject: 's', html: 'a\n{{/if}}' }),
      'content that does not compile',
      /^template html does not compile at line 2/,
    );
    expectValidationError(await preview({ subject: 's', subjcet: 't' }), 'an unknown field', /subjcet/);
    for (const permission of ['read_only', 'send_only'] as const) {
      const other = await createKey(stack, a.accountId, permission);
      const res = await preview({ subject: 'x' }, other.key);
      expect(res.status, permission).toBe(403);
      expect(res.body.error).toBe('permission denied');
    }
    expect((await call('POST', `${stack.api}/template-preview`, { body: { subject: 'x' } })).status).toBe(401);
  });
});

describe('unknown query parameters, against the real service', () => {
  it('are a 400 naming them on GET routes of both APIs, after the credentials are judged', async () => {
    const id = await sendSettled(stack.apiKey, 'sender@example.com');
    const publicCases: [string, string][] = [
      [`/emails?limit=10`, 'limit'],
      [`/emails?pageSize=10`, 'pageSize'],
      [`/emails/${id}?expand=events`, 'expand'],
      [`/emails/${id}/events?limit=1`, 'limit'],
      [`/events?emailId=${id}`, 'emailId'],
      [`/events?_=1700000000000`, '_'],
      [`/templates?q=welcome`, 'q'],
      [`/suppressions?status=bounced`, 'status'],
      [`/suppressions/export?format=json`, 'format'],
      [`/inbound/emails?limit=5`, 'limit'],
    ];
    for (const [path, name] of publicCases) {
      const res = await call('GET', `${stack.api}${path}`, { token: stack.apiKey });
      expectValidationError(res, path, new RegExp(`^unknown query parameter ${name}: it takes `));
      // Without a key, still the 401 first.
      expect((await call('GET', `${stack.api}${path}`)).status, path).toBe(401);
    }
    const adminCases: [string, string][] = [
      ['/accounts?page=1', 'page'],
      [`/accounts/${stack.accountId}/emails?limit=5`, 'limit'],
      [`/accounts/${stack.accountId}/stats?dayz=7`, 'dayz'],
      [`/emails/${id}?account_id=${stack.accountId}`, 'account_id'],
      ['/catcher/messages?page_size=5', 'page_size'],
    ];
    for (const [path, name] of adminCases) {
      const res = await admin(stack, 'GET', path, undefined, 400);
      expect(res.body, path).toEqual({
        error: 'validation error',
        message: expect.stringMatching(new RegExp(`^unknown query parameter ${name}: it takes `)),
      });
    }
  });

  it('still takes every documented parameter', async () => {
    const id = await sendSettled(stack.apiKey, 'sender@example.com');
    const publicOk = [
      '/emails?page=1&page_size=5&status=delivered&job_type=direct&stream=transactional',
      `/emails?job_id=&page=2`,
      `/events?after=&limit=5&type=delivery&email_id=${id}`,
      '/emails/scheduled?page=1&limit=5&status=scheduled',
      '/emails/batch?page=1&limit=5',
      '/templates?page=1&page_size=10',
      '/suppressions?email=x&reason=manual&scope=all&topic=&page=1&page_size=10',
      '/inbound/routes?page=1&page_size=10',
      '/inbound/emails?page=1&page_size=10',
    ];
    for (const path of publicOk) await get(path, stack.apiKey);
    const adminOk = [
      `/accounts/${stack.accountId}/emails?page=1&page_size=5&status=delivered&job_type=direct&job_id=&stream=`,
      `/accounts/${stack.accountId}/stats?days=7&stream=transactional`,
      `/accounts/${stack.accountId}/suppressions?email=x&reason=manual&scope=all&topic=`,
      `/accounts/${stack.accountId}/batches?page=1&limit=5&status=`,
      '/catcher/messages?limit=5',
    ];
    for (const path of adminOk) await admin(stack, 'GET', path);
  });
});
