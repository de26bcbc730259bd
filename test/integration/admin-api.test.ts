import { beforeAll, describe, expect, it } from 'vitest';
import { addDomain, admin, createAccount, createKey, createSender } from '../helpers/admin-fixtures.js';
import { call, eventually, validEmail } from '../helpers/http.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { useStack } from '../helpers/use-stack.js';

const stack = useStack();
beforeAll(async () => {
  stack.sink.refuseRecipient = (address) => (address.startsWith('bounce@') ? '550 5.1.1 no such user' : undefined);
});

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const adminCall = (method: string, path: string, body?: unknown) =>
  call(method, `${stack.admin}${path}`, { token: ADMIN_TOKEN, ...(body !== undefined ? { body } : {}) });

describe('accounts', () => {
  it('POST /accounts creates a healthy account with quota 100', async () => {
    const res = await admin(stack, 'POST', '/accounts', { name: 'Acme Ltd' });
    expect(res.body).toEqual({ id: expect.stringMatching(/^acc_[0-9a-z]{26}$/), name: 'Acme Ltd', status: 'healthy', daily_quota: 100, created_at: expect.stringMatching(ISO) });
  });

  it('POST /accounts without a name is 400', async () => {
    const res = await adminCall('POST', '/accounts', {});
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'validation error', message: expect.stringContaining('name') });
  });

  it('GET /accounts/:id adds sent_today, bounce_rate and complaint_rate as JSON numbers', async () => {
    const s = await createSender(stack, 'stats', 'stats.example');
    const before = await admin(stack, 'GET', `/accounts/${s.accountId}`);
    expect(before.body).toEqual({
      id: s.accountId, name: 'stats', status: 'healthy', daily_quota: 1000, created_at: expect.stringMatching(ISO),
      sent_today: 0, bounce_rate: 0, complaint_rate: 0,
    });
    for (let i = 0; i < 2; i++) {
      expect((await call('POST', `${stack.api}/emails`, { token: s.key, body: validEmail({ from: 'a@stats.example' }) })).status).toBe(200);
    }
    const after = await admin(stack, 'GET', `/accounts/${s.accountId}`);
    expect(after.body.sent_today).toBe(2);
    expect(typeof after.body.bounce_rate).toBe('number');
    expect(typeof after.body.complaint_rate).toBe('number');
  });

  it('PATCH /accounts/:id sets the status and the quota', async () => {
    const id = await createAccount(stack, 'patch me');
    const paused = await admin(stack, 'PATCH', `/accounts/${id}`, { status: 'paused' });
    expect(paused.body).toMatchObject({ id, status: 'paused', daily_quota: 100 });
    const quota = await admin(stack, 'PATCH', `/accounts/${id}`, { daily_quota: 250 });
    expect(quota.body).toMatchObject({ id, status: 'paused', daily_quota: 250 });
    const both = await admin(stack, 'PATCH', `/accounts/${id}`, { status: 'healthy', daily_quota: 7 });
    expect(both.body).toMatchObject({ id, status: 'healthy', daily_quota: 7 });
    const review = await admin(stack, 'PATCH', `/accounts/${id}`, { status: 'review' });
    expect(review.body.status).toBe('review');
    expect((await admin(stack, 'GET', `/accounts/${id}`)).body).toMatchObject({ status: 'review', daily_quota: 7 });
  });

  it('PATCH /accounts/:id refuses an unknown status or a negative quota', async () => {
    const id = await createAccount(stack, 'bad patch');
    const status = await adminCall('PATCH', `/accounts/${id}`, { status: 'deleted' });
    expect(status.status).toBe(400);
    expect(status.body).toEqual({ error: 'validation error', message: expect.stringContaining('status') });
    const quota = await adminCall('PATCH', `/accounts/${id}`, { daily_quota: -1 });
    expect(quota.status).toBe(400);
    expect(quota.body).toEqual({ error: 'validation error', message: expect.stringContaining('daily_quota') });
    expect((await admin(stack, 'GET', `/accounts/${id}`)).body).toMatchObject({ status: 'healthy', daily_quota: 100 });
  });

  it('GET /accounts lists every account, the seeded default included', async () => {
    const id = await createAccount(stack, 'listed');
    const res = await admin<{ accounts: { id: string; name: string; daily_quota: number }[] }>(stack, 'GET', '/accounts');
    const ids = res.body.accounts.map((a) => a.id);
    expect(ids).toContain(id);
    expect(ids).toContain(stack.accountId);
    expect(res.body.accounts.find((a) => a.id === stack.accountId)).toMatchObject({ name: 'default', daily_quota: 1000 });
  });
});

describe('domains', () => {
  it('POST /accounts/:id/domains answers the domain with its DNS records, unverified', async () => {
    const id = await createAccount(stack, 'domains');
    const res = await admin(stack, 'POST', `/accounts/${id}/domains`, { name: 'Mail.Domains.Example' });
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^dom_[0-9a-z]{26}$/),
      name: 'mail.domains.example',
      verified: false,
      open_tracking: false,
      click_tracking: false,
    });
    const records = res.body.dns_records as { type: string; name: string; value: string }[];
    expect(records.length).toBeGreaterThan(0);
    for (const r of records) expect(r).toEqual({ type: expect.any(String), name: expect.any(String), value: expect.any(String) });
    expect(records.some((r) => r.type === 'TXT' && r.name.endsWith('mail.domains.example'))).toBe(true);
  });

  it('refuses an invalid domain name and a duplicate', async () => {
    const id = await createAccount(stack, 'bad domains');
    const bad = await adminCall('POST', `/accounts/${id}/domains`, { name: 'not a domain' });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'validation error', message: expect.stringContaining('name') });
    await admin(stack, 'POST', `/accounts/${id}/domains`, { name: 'dup.example' });
    const dup = await adminCall('POST', `/accounts/${id}/domains`, { name: 'dup.example' });
    expect(dup.status).toBe(400);
  });

  it('GET /accounts/:id/domains lists them', async () => {
    const id = await createAccount(stack, 'two domains');
    const a = await addDomain(stack, id, 'one.example', false);
    const b = await addDomain(stack, id, 'two.example', true);
    const res = await admin<{ domains: { id: string; name: string; verified: boolean; dns_records: unknown[] }[] }>(stack, 'GET', `/accounts/${id}/domains`);
    expect(res.body.domains.map((d) => [d.id, d.name, d.verified]).sort()).toEqual([[a, 'one.example', false], [b, 'two.example', true]].sort());
    for (const d of res.body.domains) expect(d.dns_records.length).toBeGreaterThan(0);
  });

  it('verify without force stays unverified when the DNS record does not exist; force verifies; the first raises the quota 100 -> 1,000', async () => {
    const id = await createAccount(stack, 'verify');
    const domainId = await addDomain(stack, id, 'verify-me.example', false);
    const plain = await admin(stack, 'POST', `/domains/${domainId}/verify`, {});
    expect(plain.body).toMatchObject({ id: domainId, verified: false });
    expect((await admin(stack, 'GET', `/accounts/${id}`)).body.daily_quota).toBe(100);

    const forced = await admin(stack, 'POST', `/domains/${domainId}/verify`, { force: true });
    expect(forced.body).toMatchObject({ id: domainId, name: 'verify-me.example', verified: true });
    expect((await admin(stack, 'GET', `/accounts/${id}`)).body.daily_quota).toBe(1000);

    // Verifying again is harmless; a second verified domain does not raise further.
    expect((await admin(stack, 'POST', `/domains/${domainId}/verify`, {})).body.verified).toBe(true);
    await addDomain(stack, id, 'second-verified.example', true);
    expect((await admin(stack, 'GET', `/accounts/${id}`)).body.daily_quota).toBe(1000);
  });

  it('the first verification keeps a quota an operator already set', async () => {
    const id = await createAccount(stack, 'operator quota');
    await admin(stack, 'PATCH', `/accounts/${id}`, { daily_quota: 5 });
    await addDomain(stack, id, 'operator.example', true);
    expect((await admin(stack, 'GET', `/accounts/${id}`)).body.daily_quota).toBe(5);
  });

  it('a newly verified domain can be sent from at once', async () => {
    const id = await createAccount(stack, 'sends after verify');
    const domainId = await addDomain(stack, id, 'later.example', false);
    const { key } = await createKey(stack, id, 'send_only');
    expect((await call('POST', `${stack.api}/emails`, { token: key, body: validEmail({ from: 'a@later.example' }) })).status).toBe(403);
    await admin(stack, 'POST', `/domains/${domainId}/verify`, { force: true });
    expect((await call('POST', `${stack.api}/emails`, { token: key, body: validEmail({ from: 'a@later.example' }) })).status).toBe(200);
  });

  it('PATCH /domains/:id turns open and click tracking on and off, each on its own', async () => {
    const id = await createAccount(stack, 'tracking');
    const domainId = await addDomain(stack, id, 'track.example', false);
    const open = await admin(stack, 'PATCH', `/domains/${domainId}`, { open_tracking: true });
    expect(open.body).toMatchObject({ id: domainId, open_tracking: true, click_tracking: false });
    const click = await admin(stack, 'PATCH', `/domains/${domainId}`, { click_tracking: true });
    expect(click.body).toMatchObject({ open_tracking: true, click_tracking: true });
    const off = await admin(stack, 'PATCH', `/domains/${domainId}`, { open_tracking: false });
    expect(off.body).toMatchObject({ open_tracking: false, click_tracking: true });
    const listed = await admin<{ domains: { id: string; open_tracking: boolean; click_tracking: boolean }[] }>(stack, 'GET', `/accounts/${id}/domains`);
    expect(listed.body.domains.find((d) => d.id === domainId)).toMatchObject({ open_tracking: false, click_tracking: true });
  });
});

describe('API keys', () => {
  it('POST creates a key shown once; the list never shows it', async () => {
    const id = await createAccount(stack, 'keys');
    const created = await admin(stack, 'POST', `/accounts/${id}/api-keys`, { name: 'ci', permission: 'send_only', allowed_domains: ['Keys.Example'] });
    expect(created.body).toEqual({
      id: expect.stringMatching(/^key_[0-9a-z]{26}$/), name: 'ci', permission: 'send_only', allowed_domains: ['keys.example'],
      created_at: expect.stringMatching(ISO), key: expect.stringMatching(/^mk_/),
    });
    const key = created.body.key as string;
    const list = await admin<{ api_keys: Record<string, unknown>[] }>(stack, 'GET', `/accounts/${id}/api-keys`);
    expect(list.text).not.toContain(key);
    expect(list.body.api_keys).toHaveLength(1);
    const item = list.body.api_keys[0]!;
    expect('key' in item).toBe(false);
    expect(item).toEqual({
      id: created.body.id, name: 'ci', permission: 'send_only', allowed_domains: ['keys.example'], created_at: created.body.created_at,
      usage: { request_count: 0, email_sent_count: 0, error_rate: 0 },
    });
  });

  it('refuses an unknown permission and a missing name', async () => {
    const id = await createAccount(stack, 'bad keys');
    const perm = await adminCall('POST', `/accounts/${id}/api-keys`, { name: 'x', permission: 'admin' });
    expect(perm.status).toBe(400);
    expect(perm.body).toEqual({ error: 'validation error', message: expect.stringContaining('permission') });
    const name = await adminCall('POST', `/accounts/${id}/api-keys`, { permission: 'all' });
    expect(name.status).toBe(400);
    expect(name.body).toEqual({ error: 'validation error', message: expect.stringContaining('name') });
  });

  it('usage counts requests, emails sent and the error rate, up to date when listed', async () => {
    const s = await createSender(stack, 'usage', 'usage.example');
    const { id: keyId, key } = await createKey(stack, s.accountId, 'all');
    const ok1 = await call('POST', `${stack.api}/emails`, { token: key, body: validEmail({ from: 'a@usage.example' }) });
    const ok2 = await call('POST', `${stack.api}/emails`, { token: key, body: validEmail({ from: 'a@usage.example' }) });
    const ok3 = await call('GET', `${stack.api}/emails`, { token: key });
    const bad = await call('GET', `${stack.api}/emails/em_missing`, { token: key });
    expect([ok1.status, ok2.status, ok3.status, bad.status]).toEqual([200, 200, 200, 404]);

    const list = await admin<{ api_keys: { id: string; usage: Record<string, number> }[] }>(stack, 'GET', `/accounts/${s.accountId}/api-keys`);
    expect(list.body.api_keys.find((k) => k.id === keyId)!.usage).toEqual({ request_count: 4, email_sent_count: 2, error_rate: 0.25 });
    // The account's other key is counted apart.
    expect(list.body.api_keys.find((k) => k.id === s.keyId)!.usage).toEqual({ request_count: 0, email_sent_count: 0, error_rate: 0 });

    // Counting goes on: the next listing reflects the next request at once.
    expect((await call('GET', `${stack.api}/emails`, { token: key })).status).toBe(200);
    const again = await admin<{ api_keys: { id: string; usage: Record<string, number> }[] }>(stack, 'GET', `/accounts/${s.accountId}/api-keys`);
    expect(again.body.api_keys.find((k) => k.id === keyId)!.usage).toEqual({ request_count: 5, email_sent_count: 2, error_rate: 0.2 });
  });

  it('DELETE answers {success: true, message}; the key is 401 from the next request and leaves the list', async () => {
    const id = await createAccount(stack, 'delete key');
    const { id: keyId, key } = await createKey(stack, id, 'read_only');
    expect((await call('GET', `${stack.api}/emails`, { token: key })).status).toBe(200);
    const del = await admin(stack, 'DELETE', `/api-keys/${keyId}`);
    expect(del.body).toEqual({ success: true, message: expect.any(String) });
    const after = await call('GET', `${stack.api}/emails`, { token: key });
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ error: 'unauthorized', message: 'Invalid or missing API key' });
    const list = await admin<{ api_keys: { id: string }[] }>(stack, 'GET', `/accounts/${id}/api-keys`);
    expect(list.body.api_keys.map((k) => k.id)).not.toContain(keyId);
    const twice = await adminCall('DELETE', `/api-keys/${keyId}`);
    expect(twice.status).toBe(404);
    expect(twice.body).toEqual({ error: 'not found', message: `API key ${keyId} not found` });
  });
});

describe('webhooks', () => {
  const PUBLIC_URL = 'https://93.184.215.14/hooks/mail';

  it('POST creates a webhook whose secret is shown once; the list omits it', async () => {
    const id = await createAccount(stack, 'hooks');
    const created = await admin(stack, 'POST', `/accounts/${id}/webhooks`, { url: PUBLIC_URL, events: ['delivery', 'bounce'] });
    expect(created.body).toEqual({
      id: expect.stringMatching(/^wh_[0-9a-z]{26}$/), url: PUBLIC_URL, events: ['delivery', 'bounce'],
      created_at: expect.stringMatching(ISO), secret: expect.any(String),
    });
    const secret = created.body.secret as string;
    expect(secret.length).toBeGreaterThanOrEqual(32);
    const list = await admin<{ webhooks: Record<string, unknown>[] }>(stack, 'GET', `/accounts/${id}/webhooks`);
    expect(list.text).not.toContain(secret);
    expect(list.body.webhooks).toEqual([{ id: created.body.id, url: PUBLIC_URL, events: ['delivery', 'bounce'], created_at: created.body.created_at }]);
  });

  it.each([
    ['loopback', 'http://127.0.0.1/hook'],
    ['loopback IPv6', 'http://[::1]:8080/hook'],
    ['private 10/8', 'http://10.1.2.3/hook'],
    ['private 192.168/16', 'https://192.168.0.10/hook'],
    ['link-local (cloud metadata)', 'http://169.254.169.254/latest/meta-data'],
    ['localhost by name', 'http://localhost:9/hook'],
  ])('refuses a %s URL with 400 (no SSRF)', async (_name, url) => {
    const id = await createAccount(stack, 'ssrf');
    const res = await adminCall('POST', `/accounts/${id}/webhooks`, { url, events: ['send'] });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'validation error', message: expect.stringContaining('url') });
    expect((await admin<{ webhooks: unknown[] }>(stack, 'GET', `/accounts/${id}/webhooks`)).body.webhooks).toEqual([]);
  });

  it.each([
    ['not a URL', 'not a url'],
    ['another scheme', 'ftp://93.184.215.14/x'],
    ['credentials in the URL', 'https://user:pw@93.184.215.14/x'],
  ])('refuses a URL that is %s', async (_name, url) => {
    const id = await createAccount(stack, 'bad url');
    const res = await adminCall('POST', `/accounts/${id}/webhooks`, { url, events: ['send'] });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation error');
  });

  it('refuses an invalid event type and an empty event list', async () => {
    const id = await createAccount(stack, 'bad events');
    const bad = await adminCall('POST', `/accounts/${id}/webhooks`, { url: PUBLIC_URL, events: ['delivery', 'opened'] });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'validation error', message: expect.stringContaining('opened') });
    const none = await adminCall('POST', `/accounts/${id}/webhooks`, { url: PUBLIC_URL, events: [] });
    expect(none.status).toBe(400);
    expect(none.body.error).toBe('validation error');
  });

  it('accepts every event type of the spec', async () => {
    const id = await createAccount(stack, 'all events');
    const events = ['send', 'delivery', 'bounce', 'complaint', 'reject', 'open', 'click'];
    const res = await admin(stack, 'POST', `/accounts/${id}/webhooks`, { url: PUBLIC_URL, events });
    expect(res.body.events).toEqual(events);
  });

  it('DELETE answers {success: true, message} and removes it; again is 404', async () => {
    const id = await createAccount(stack, 'delete hook');
    const created = await admin<{ id: string }>(stack, 'POST', `/accounts/${id}/webhooks`, { url: PUBLIC_URL, events: ['send'] });
    const del = await admin(stack, 'DELETE', `/webhooks/${created.body.id}`);
    expect(del.body).toEqual({ success: true, message: expect.any(String) });
    expect((await admin<{ webhooks: unknown[] }>(stack, 'GET', `/accounts/${id}/webhooks`)).body.webhooks).toEqual([]);
    const again = await adminCall('DELETE', `/webhooks/${created.body.id}`);
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ error: 'not found', message: `webhook ${created.body.id} not found` });
  });

  it('POST /webhooks/:id/verify is 404 for an unknown webhook (its request is tested in webhooks.test.ts)', async () => {
    const unknown = await adminCall('POST', '/webhooks/wh_unknown/verify', {});
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'not found', message: 'webhook wh_unknown not found' });
  });

  it('a webhook whose address turned private after creation (DNS changed) is refused at every delivery: nothing reaches it', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const s = await createSender(stack, 'rebind', 'rebind.example');
      const hook = await admin<{ id: string }>(stack, 'POST', `/accounts/${s.accountId}/webhooks`, { url: PUBLIC_URL, events: ['delivery'] });
      // What a name that now resolves to a loopback address amounts to: the stored URL points there.
      await stack.mailer.sql`update webhooks set url = ${`${receiver.url}/rebound`} where id = ${hook.body.id}`;
      await call('POST', `${stack.api}/emails`, { token: s.key, body: validEmail({ from: 'x@rebind.example' }) });
      const discarded = await eventually(async () => {
        const r = await admin<{ deliveries: { status: string; attempts: { status_code: number; error: string }[] }[] }>(stack, 'GET', `/webhooks/${hook.body.id}/deliveries`);
        return r.body.deliveries[0]?.status === 'discarded' ? r.body.deliveries[0] : undefined;
      }, 30_000, 200);
      expect(discarded.attempts).toHaveLength(4);
      for (const a of discarded.attempts) expect(a).toMatchObject({ status_code: 0, error: expect.stringMatching(/private or loopback/) });
      expect(receiver.received).toEqual([]);
    } finally {
      await receiver.close();
    }
  }, 40_000);

  describe('with MAILER_WEBHOOK_ALLOW_PRIVATE=1', () => {
    const open = useStack({ MAILER_WEBHOOK_ALLOW_PRIVATE: '1' });

    it('a loopback URL is accepted', async () => {
      const res = await call('POST', `${open.admin}/accounts/${open.accountId}/webhooks`, {
        token: ADMIN_TOKEN, body: { url: 'http://127.0.0.1:9/hook', events: ['delivery'] },
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ url: 'http://127.0.0.1:9/hook', events: ['delivery'], secret: expect.any(String) });
    });
  });
});

describe('404 for unknown ids', () => {
  it.each([
    ['GET', '/accounts/acc_unknown', undefined, 'account acc_unknown not found'],
    ['PATCH', '/accounts/acc_unknown', { status: 'paused' }, 'account acc_unknown not found'],
    ['POST', '/accounts/acc_unknown/domains', { name: 'x.example' }, 'account acc_unknown not found'],
    ['GET', '/accounts/acc_unknown/domains', undefined, 'account acc_unknown not found'],
    ['POST', '/accounts/acc_unknown/api-keys', { name: 'k', permission: 'all' }, 'account acc_unknown not found'],
    ['GET', '/accounts/acc_unknown/api-keys', undefined, 'account acc_unknown not found'],
    ['POST', '/accounts/acc_unknown/webhooks', { url: 'https://93.184.215.14/h', events: ['send'] }, 'account acc_unknown not found'],
    ['GET', '/accounts/acc_unknown/webhooks', undefined, 'account acc_unknown not found'],
    ['POST', '/domains/dom_unknown/verify', { force: true }, 'domain dom_unknown not found'],
    ['PATCH', '/domains/dom_unknown', { open_tracking: true }, 'domain dom_unknown not found'],
    ['DELETE', '/api-keys/key_unknown', undefined, 'API key key_unknown not found'],
    ['DELETE', '/webhooks/wh_unknown', undefined, 'webhook wh_unknown not found'],
  ] as const)('%s %s', async (method, path, body, message) => {
    const res = await adminCall(method, path, body);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not found', message });
  });
});

describe('GET /emails: filters, pagination, newest first', () => {
  let s: Awaited<ReturnType<typeof createSender>>;
  const ids: string[] = [];
  const list = (query = '') => call<{ data: Record<string, unknown>[]; total: number }>('GET', `${stack.api}/emails${query}`, { token: s.key });

  beforeAll(async () => {
    s = await createSender(stack, 'lister', 'list.example');
    const recipients = ['a@example.net', 'bounce@example.net', 'c@example.net'];
    for (const [i, to] of recipients.entries()) {
      const res = await call<{ id: string }>('POST', `${stack.api}/emails`, { token: s.key, body: validEmail({ from: 'l@list.example', to: [to], subject: `list ${i}` }) });
      expect(res.status).toBe(200);
      ids.push(res.body.id);
    }
    // Wait for the outcomes: two delivered, the refused recipient bounced.
    await eventually(async () => {
      const r = await list('?status=pending');
      return r.body.total === 0;
    });
  });

  it('lists every email of the account, newest first, with the list item fields only', async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(3);
    expect(res.body.data.map((e) => e.id)).toEqual([...ids].reverse());
    expect(res.body.data[0]).toEqual({
      id: ids[2], from: 'l@list.example', to: ['c@example.net'],
      subject: 'list 2', status: 'delivered', created_at: expect.stringMatching(ISO),
    });
    const created = res.body.data.map((e) => Date.parse(e.created_at as string));
    expect([...created].sort((a, b) => b - a)).toEqual(created);
  });

  it('filters by status', async () => {
    const delivered = await list('?status=delivered');
    expect(delivered.body).toEqual({ data: [expect.objectContaining({ id: ids[2] }), expect.objectContaining({ id: ids[0] })], total: 2 });
    const bounced = await list('?status=bounced');
    expect(bounced.body).toEqual({ data: [expect.objectContaining({ id: ids[1], status: 'bounced' })], total: 1 });
    for (const status of ['pending', 'sent', 'complained']) {
      expect((await list(`?status=${status}`)).body).toEqual({ data: [], total: 0 });
    }
  });

  it('filters by job_type and job_id', async () => {
    expect((await list('?job_type=direct')).body.total).toBe(3);
    expect((await list('?job_type=batch')).body).toEqual({ data: [], total: 0 });
    expect((await list('?job_type=scheduled')).body).toEqual({ data: [], total: 0 });
    expect((await list('?job_id=bat_01hzzzzzzzzzzzzzzzzzzzzzzz')).body).toEqual({ data: [], total: 0 });
    expect((await list('?job_type=direct&status=bounced')).body.total).toBe(1);
  });

  it('paginates with page and page_size; total is the count of all matches', async () => {
    const p1 = await list('?page_size=2');
    expect(p1.body.data.map((e) => e.id)).toEqual([ids[2], ids[1]]);
    expect(p1.body.total).toBe(3);
    const p2 = await list('?page=2&page_size=2');
    expect(p2.body.data.map((e) => e.id)).toEqual([ids[0]]);
    expect(p2.body.total).toBe(3);
    const p3 = await list('?page=3&page_size=2');
    expect(p3.body).toEqual({ data: [], total: 3 });
    const one = await list('?page=2&page_size=1&status=delivered');
    expect(one.body).toEqual({ data: [expect.objectContaining({ id: ids[0] })], total: 2 });
  });

  it('defaults to page 1 with 20 items', async () => {
    for (let i = 0; i < 20; i++) {
      expect((await call('POST', `${stack.api}/emails`, { token: s.key, body: validEmail({ from: 'l@list.example', subject: `more ${i}` }) })).status).toBe(200);
    }
    const res = await list();
    expect(res.body.total).toBe(23);
    expect(res.body.data).toHaveLength(20);
    expect(res.body.data[0]!.subject).toBe('more 19');
    const page2 = await list('?page=2');
    expect(page2.body.data.map((e) => e.id)).toEqual([ids[2], ids[1], ids[0]]);
  });

  it('shows the detail of a bounced email with its status', async () => {
    const res = await call('GET', `${stack.api}/emails/${ids[1]}`, { token: s.key });
    expect(res.body).toMatchObject({ id: ids[1], status: 'bounced', to: ['bounce@example.net'], job_type: 'direct', job_id: '', mal_status: 'healthy' });
  });
});
