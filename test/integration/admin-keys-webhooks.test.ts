import { describe, expect, it } from 'vitest';
import { admin, createAccount, createKey, createSender } from '../helpers/admin-fixtures.js';
import { call, eventually, validEmail } from '../helpers/http.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { ISO_MS as ISO } from '../helpers/time.js';
import { useStack } from '../helpers/use-stack.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';

const stack = useStack();
const adminCall = (method: string, path: string, body?: unknown) =>
  call(method, `${stack.admin}${path}`, { token: ADMIN_TOKEN, ...(body !== undefined ? { body } : {}) });

describe('API keys', () => {
  it('POST creates a key shown once; the list never shows it', async () => {
    const id = await createAccount(stack, 'keys');
    const created = await admin(stack, 'POST', `/accounts/${id}/api-keys`, {
      name: 'ci',
      permission: 'send_only',
      allowed_domains: ['Keys.Example'],
    });
    expect(created.body).toEqual({
      id: expect.stringMatching(/^key_[0-9a-z]{26}$/),
      name: 'ci',
      permission: 'send_only',
      allowed_domains: ['keys.example'],
      created_at: expect.stringMatching(ISO),
      key: expect.stringMatching(/^mk_/),
    });
    const key = created.body.key as string;
    const list = await admin<{ api_keys: Record<string, unknown>[] }>(stack, 'GET', `/accounts/${id}/api-keys`);
    expect(list.text).not.toContain(key);
    expect(list.body.api_keys).toHaveLength(1);
    const item = list.body.api_keys[0]!;
    expect('key' in item).toBe(false);
    expect(item).toEqual({
      id: created.body.id,
      name: 'ci',
      permission: 'send_only',
      allowed_domains: ['keys.example'],
      created_at: created.body.created_at,
      // sent_today is counted only for a key with a daily_quota of its own (api-keys.test.ts).
      usage: { request_count: 0, email_sent_count: 0, error_rate: 0, sent_today: 0 },
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
    const ok1 = await call('POST', `${stack.api}/emails`, {
      token: key,
      body: validEmail({ from: 'a@usage.example' }),
    });
    const ok2 = await call('POST', `${stack.api}/emails`, {
      token: key,
      body: validEmail({ from: 'a@usage.example' }),
    });
    const ok3 = await call('GET', `${stack.api}/emails`, { token: key });
    const bad = await call('GET', `${stack.api}/emails/em_missing`, { token: key });
    expect([ok1.status, ok2.status, ok3.status, bad.status]).toEqual([200, 200, 200, 404]);

    const list = await admin<{ api_keys: { id: string; usage: Record<string, number> }[] }>(
      stack,
      'GET',
      `/accounts/${s.accountId}/api-keys`,
    );
    expect(list.body.api_keys.find((k) => k.id === keyId)!.usage).toEqual({
      request_count: 4,
      email_sent_count: 2,
      error_rate: 0.25,
      sent_today: 0,
    });
    // The account's other key is counted apart.
    expect(list.body.api_keys.find((k) => k.id === s.keyId)!.usage).toEqual({
      request_count: 0,
      email_sent_count: 0,
      error_rate: 0,
      sent_today: 0,
    });

    // Counting goes on: the next listing reflects the next request at once.
    expect((await call('GET', `${stack.api}/emails`, { token: key })).status).toBe(200);
    const again = await admin<{ api_keys: { id: string; usage: Record<string, number> }[] }>(
      stack,
      'GET',
      `/accounts/${s.accountId}/api-keys`,
    );
    expect(again.body.api_keys.find((k) => k.id === keyId)!.usage).toEqual({
      request_count: 5,
      email_sent_count: 2,
      error_rate: 0.2,
      sent_today: 0,
    });
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

const PUBLIC_URL = 'https://93.184.215.14/hooks/mail';

/** Creates an account named `name` and offers it a webhook at `url`. */
const postWebhookUrl = async (name: string, url: string) => {
  const id = await createAccount(stack, name);
  return { id, res: await adminCall('POST', `/accounts/${id}/webhooks`, { url, events: ['send'] }) };
};

describe('webhooks', () => {
  it('POST creates a webhook whose secret is shown once; the list omits it', async () => {
    const id = await createAccount(stack, 'hooks');
    const created = await admin(stack, 'POST', `/accounts/${id}/webhooks`, {
      url: PUBLIC_URL,
      events: ['delivery', 'bounce'],
    });
    expect(created.body).toEqual({
      id: expect.stringMatching(/^wh_[0-9a-z]{26}$/),
      url: PUBLIC_URL,
      events: ['delivery', 'bounce'],
      created_at: expect.stringMatching(ISO),
      secret: expect.any(String),
    });
    const secret = created.body.secret as string;
    expect(secret.length).toBeGreaterThanOrEqual(32);
    const list = await admin<{ webhooks: Record<string, unknown>[] }>(stack, 'GET', `/accounts/${id}/webhooks`);
    expect(list.text).not.toContain(secret);
    expect(list.body.webhooks).toEqual([
      { id: created.body.id, url: PUBLIC_URL, events: ['delivery', 'bounce'], created_at: created.body.created_at },
    ]);
  });

  it.each([
    ['loopback', 'http://127.0.0.1/hook'],
    ['loopback IPv6', 'http://[::1]:8080/hook'],
    ['private 10/8', 'http://10.1.2.3/hook'],
    ['private 192.168/16', 'https://192.168.0.10/hook'],
    ['link-local (cloud metadata)', 'http://169.254.169.254/latest/meta-data'],
    ['localhost by name', 'http://localhost:9/hook'],
  ])('refuses a %s URL with 400 (no SSRF)', async (_name, url) => {
    const { id, res } = await postWebhookUrl('ssrf', url);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'validation error', message: expect.stringContaining('url') });
    expect((await admin<{ webhooks: unknown[] }>(stack, 'GET', `/accounts/${id}/webhooks`)).body.webhooks).toEqual([]);
  });

  it.each([
    ['not a URL', 'not a url'],
    ['another scheme', 'ftp://93.184.215.14/x'],
    ['credentials in the URL', 'https://user:pw@93.184.215.14/x'],
  ])('refuses a URL that is %s', async (_name, url) => {
    const { res } = await postWebhookUrl('bad url', url);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation error');
  });

  it('refuses an invalid event type and an empty event list', async () => {
    const id = await createAccount(stack, 'bad events');
    const bad = await adminCall('POST', `/accounts/${id}/webhooks`, {
      url: PUBLIC_URL,
      events: ['delivery', 'opened'],
    });
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
    const created = await admin<{ id: string }>(stack, 'POST', `/accounts/${id}/webhooks`, {
      url: PUBLIC_URL,
      events: ['send'],
    });
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
});

describe('webhooks', () => {
  it('a webhook whose address turned private after creation (DNS changed) is refused at every delivery: nothing reaches it', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const s = await createSender(stack, 'rebind', 'rebind.example');
      const hook = await admin<{ id: string }>(stack, 'POST', `/accounts/${s.accountId}/webhooks`, {
        url: PUBLIC_URL,
        events: ['delivery'],
      });
      // What a name that now resolves to a loopback address amounts to: the stored URL points there.
      await stack.mailer.sql`update webhooks set url = ${`${receiver.url}/rebound`} where id = ${hook.body.id}`;
      await call('POST', `${stack.api}/emails`, { token: s.key, body: validEmail({ from: 'x@rebind.example' }) });
      const discarded = await eventually(
        async () => {
          const r = await admin<{
            deliveries: { status: string; attempts: { status_code: number; error: string }[] }[];
          }>(stack, 'GET', `/webhooks/${hook.body.id}/deliveries`);
          return r.body.deliveries[0]?.status === 'discarded' ? r.body.deliveries[0] : undefined;
        },
        30_000,
        200,
      );
      expect(discarded.attempts).toHaveLength(4);
      for (const a of discarded.attempts)
        expect(a).toMatchObject({ status_code: 0, error: expect.stringMatching(/private or loopback/) });
      expect(receiver.received).toEqual([]);
    } finally {
      await receiver.close();
    }
  }, 40_000);

  describe('with MAILER_WEBHOOK_ALLOW_PRIVATE=1', () => {
    const open = useStack({ MAILER_WEBHOOK_ALLOW_PRIVATE: '1' });

    it('a loopback URL is accepted', async () => {
      const res = await call('POST', `${open.admin}/accounts/${open.accountId}/webhooks`, {
        token: ADMIN_TOKEN,
        body: { url: 'http://127.0.0.1:9/hook', events: ['delivery'] },
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        url: 'http://127.0.0.1:9/hook',
        events: ['delivery'],
        secret: expect.any(String),
      });
    });
  });
});
