import { beforeAll, describe, expect, it } from 'vitest';
import { addDomain, admin, createKey, createSender } from '../helpers/admin-fixtures.js';
import { call, validEmail } from '../helpers/http.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { useStack } from '../helpers/use-stack.js';

const stack = useStack();

const UNAUTHORIZED = { error: 'unauthorized', message: 'Invalid or missing API key' };

/** Every endpoint of the spec, with a body that is valid for it, so that only authorization decides. */
const endpoints = (from = 'sender@example.com'): { method: string; path: string; body?: unknown }[] => [
  { method: 'POST', path: '/emails', body: validEmail({ from }) },
  {
    method: 'POST',
    path: '/emails/schedule',
    body: validEmail({ from, scheduled_at: new Date(Date.now() + 3_600_000).toISOString() }),
  },
  { method: 'GET', path: '/emails/scheduled' },
  { method: 'GET', path: '/emails/scheduled/sch_01jzzzzzzzzzzzzzzzzzzzzzzz' },
  { method: 'DELETE', path: '/emails/scheduled/sch_01jzzzzzzzzzzzzzzzzzzzzzzz' },
  { method: 'POST', path: '/emails/batch', body: { emails: [validEmail({ from })] } },
  { method: 'GET', path: '/emails/batch' },
  { method: 'GET', path: '/emails/batch/bat_01jzzzzzzzzzzzzzzzzzzzzzzz' },
  { method: 'GET', path: '/emails' },
  { method: 'GET', path: '/emails/em_01jzzzzzzzzzzzzzzzzzzzzzzz' },
];

const withAuth = (authorization: string) => ({ headers: { authorization } });

describe('401: missing, wrong, deleted or malformed API keys', () => {
  it('answers 401 with the exact spec body on every endpoint when the header is missing', async () => {
    for (const e of endpoints()) {
      const res = await call(e.method, `${stack.api}${e.path}`, e.body !== undefined ? { body: e.body } : {});
      expect(res.status, `${e.method} ${e.path}`).toBe(401);
      expect(res.body, `${e.method} ${e.path}`).toEqual(UNAUTHORIZED);
    }
  });

  it('answers 401 for a wrong key (well-formed and not)', async () => {
    const wellFormedButUnknown = `mk_${'A'.repeat(43)}`;
    for (const token of [wellFormedButUnknown, 'nope', stack.apiKey.slice(0, -1)]) {
      const send = await call('POST', `${stack.api}/emails`, { token, body: validEmail() });
      expect(send.status).toBe(401);
      expect(send.body).toEqual(UNAUTHORIZED);
      const list = await call('GET', `${stack.api}/emails`, { token });
      expect(list.status).toBe(401);
      expect(list.body).toEqual(UNAUTHORIZED);
    }
  });

  it.each([
    ['a double space after Bearer', (k: string) => `Bearer  ${k}`],
    ['the Token scheme', (k: string) => `Token ${k}`],
    ['no Bearer prefix', (k: string) => k],
    ['Bearer without a key', () => 'Bearer'],
    ['trailing junk after a space', (k: string) => `Bearer ${k} junk`],
    ['trailing junk glued to the key', (k: string) => `Bearer ${k}x`],
    ['two keys', (k: string) => `Bearer ${k},${k}`],
    ['Basic credentials', (k: string) => `Basic ${Buffer.from(`user:${k}`).toString('base64')}`],
  ])('answers 401 for a malformed header: %s', async (_name, make) => {
    const res = await call('GET', `${stack.api}/emails`, withAuth(make(stack.apiKey)));
    expect(res.status).toBe(401);
    expect(res.body).toEqual(UNAUTHORIZED);
    const send = await call('POST', `${stack.api}/emails`, { ...withAuth(make(stack.apiKey)), body: validEmail() });
    expect(send.status).toBe(401);
    expect(send.body).toEqual(UNAUTHORIZED);
  });

  it('judges the key before the body: no key is 401 even with malformed, unknown-field or oversized bodies', async () => {
    const bodies: { rawBody: string }[] = [
      { rawBody: '{"from": ' },
      { rawBody: JSON.stringify({ ...validEmail(), nonsense: true }) },
      { rawBody: JSON.stringify(validEmail({ text: 'x'.repeat(33 * 1024 * 1024) })) },
    ];
    for (const b of bodies) {
      const res = await call('POST', `${stack.api}/emails`, b);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    }
    // The same bodies with a valid key: the body is judged (400, 400, 413).
    const statuses = [];
    for (const b of bodies)
      statuses.push((await call('POST', `${stack.api}/emails`, { ...b, token: stack.apiKey })).status);
    expect(statuses).toEqual([400, 400, 413]);
  });

  it('accepts the well-formed header (the control for the malformed cases)', async () => {
    const res = await call('GET', `${stack.api}/emails`, withAuth(`Bearer ${stack.apiKey}`));
    expect(res.status).toBe(200);
  });

  it('a deleted key fails on the very next request', async () => {
    const { id, key } = await createKey(stack, stack.accountId, 'all');
    expect((await call('GET', `${stack.api}/emails`, { token: key })).status).toBe(200);
    const del = await admin(stack, 'DELETE', `/api-keys/${id}`);
    expect(del.body).toEqual({ success: true, message: expect.any(String) });
    for (const e of endpoints()) {
      const res = await call(e.method, `${stack.api}${e.path}`, {
        token: key,
        ...(e.body !== undefined ? { body: e.body } : {}),
      });
      expect(res.status, `${e.method} ${e.path}`).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    }
    // Other keys of the account are unaffected.
    expect((await call('GET', `${stack.api}/emails`, { token: stack.apiKey })).status).toBe(200);
  });

  // The API process keeps the keys of recent sends and a send uses what it read before; the statement that
  // stores the email confirms the key (migration 0038). What a key is now decides every answer all the same.
  it('a deleted key fails on the very next send though its sends just before were answered from the cache: 401, nothing stored', async () => {
    const s = await createSender(stack, 'deleted while sending', 'deleted-key.example');
    const { id, key } = await createKey(stack, s.accountId, 'all');
    const send = () =>
      call('POST', `${stack.api}/emails`, { token: key, body: validEmail({ from: 'a@deleted-key.example' }) });
    for (let i = 0; i < 3; i++) expect((await send()).status).toBe(200);
    await admin(stack, 'DELETE', `/api-keys/${id}`);
    for (let i = 0; i < 2; i++) {
      const res = await send();
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    }
    const list = await call<{ total: number }>('GET', `${stack.api}/emails`, { token: s.key });
    expect(list.body.total).toBe(3);
  });

  it("an account's lowered quota and a banned account count from the very next send after cached ones", async () => {
    const s = await createSender(stack, 'quota lowered', 'quota-lowered.example');
    const send = () =>
      call('POST', `${stack.api}/emails`, { token: s.key, body: validEmail({ from: 'a@quota-lowered.example' }) });
    for (let i = 0; i < 3; i++) expect((await send()).status).toBe(200);
    await admin(stack, 'PATCH', `/accounts/${s.accountId}`, { daily_quota: 3 });
    const refused = await send();
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatch(/^daily quota exceeded \(3\/3\)/);
    await admin(stack, 'PATCH', `/accounts/${s.accountId}`, { daily_quota: 4 });
    expect((await send()).status).toBe(200);
    await admin(stack, 'PATCH', `/accounts/${s.accountId}`, { status: 'banned', daily_quota: 100 });
    const banned = await send();
    expect(banned.status).toBe(401);
    expect(banned.body).toEqual({ error: 'unauthorized', message: 'This account is banned' });
    await admin(stack, 'PATCH', `/accounts/${s.accountId}`, { status: 'healthy' });
    expect((await call<{ total: number }>('GET', `${stack.api}/emails`, { token: s.key })).body.total).toBe(4);
  });
});

/** A new account sending from `domain`, and an email it sent (200) and reads back (200). */
async function senderWithEmail(name: string, domain: string) {
  const s = await createSender(stack, name, domain);
  const sent = await call<{ id: string }>('POST', `${stack.api}/emails`, {
    token: s.key,
    body: validEmail({ from: `a@${domain}` }),
  });
  expect(sent.status).toBe(200);
  expect((await call('GET', `${stack.api}/emails/${sent.body.id}`, { token: s.key })).status).toBe(200);
  return { ...s, emailId: sent.body.id };
}

describe('401: missing, wrong, deleted or malformed API keys', () => {
  it('a banned account gets 401 on every endpoint, reads included', async () => {
    const { emailId, ...s } = await senderWithEmail('to be banned', 'banned.example');

    const patched = await admin(stack, 'PATCH', `/accounts/${s.accountId}`, { status: 'banned' });
    expect(patched.body.status).toBe('banned');

    for (const e of [...endpoints('a@banned.example'), { method: 'GET', path: `/emails/${emailId}` }]) {
      const res = await call(e.method, `${stack.api}${e.path}`, {
        token: s.key,
        ...('body' in e && e.body !== undefined ? { body: e.body } : {}),
      });
      expect(res.status, `${e.method} ${e.path}`).toBe(401);
      expect(res.body.error).toBe('unauthorized');
      expect(typeof res.body.message).toBe('string');
    }
  });
});

describe('403: permission levels, sender domains and paused accounts', () => {
  let readOnly: string;
  let sendOnly: string;
  beforeAll(async () => {
    readOnly = (await createKey(stack, stack.accountId, 'read_only')).key;
    sendOnly = (await createKey(stack, stack.accountId, 'send_only')).key;
  });

  it('a read_only key cannot send (403 permission denied) and nothing is stored', async () => {
    const res = await call('POST', `${stack.api}/emails`, {
      token: readOnly,
      body: validEmail({ subject: 'read-only attempt' }),
    });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      error: 'permission denied',
      message: expect.stringMatching(/read_only.*permission to send/),
    });
    const list = await call<{ data: { subject: string }[] }>('GET', `${stack.api}/emails?page_size=100`, {
      token: readOnly,
    });
    expect(list.body.data.some((e) => e.subject === 'read-only attempt')).toBe(false);
  });

  it('a read_only key can list and read emails', async () => {
    const sent = await call<{ id: string }>('POST', `${stack.api}/emails`, { token: stack.apiKey, body: validEmail() });
    expect(sent.status).toBe(200);
    const list = await call<{ data: { id: string }[] }>('GET', `${stack.api}/emails`, { token: readOnly });
    expect(list.status).toBe(200);
    expect(list.body.data.map((e) => e.id)).toContain(sent.body.id);
    const one = await call('GET', `${stack.api}/emails/${sent.body.id}`, { token: readOnly });
    expect(one.status).toBe(200);
    expect(one.body.id).toBe(sent.body.id);
  });

  it('a send_only key can send and query status', async () => {
    const sent = await call<{ id: string; status: string }>('POST', `${stack.api}/emails`, {
      token: sendOnly,
      body: validEmail(),
    });
    expect(sent.status).toBe(200);
    expect(sent.body.status).toBe('pending');
    const one = await call('GET', `${stack.api}/emails/${sent.body.id}`, { token: sendOnly });
    expect(one.status).toBe(200);
    expect((await call('GET', `${stack.api}/emails`, { token: sendOnly })).status).toBe(200);
  });
});

// Sender domains and account status, with the stack's key of permission all.
describe('403: permission levels, sender domains and paused accounts', () => {
  it('a key with allowed_domains may send only from those domains; the 403 names the domain', async () => {
    await addDomain(stack, stack.accountId, 'second.example');
    const restricted = (await createKey(stack, stack.accountId, 'all', ['example.com'])).key;
    const ok = await call('POST', `${stack.api}/emails`, {
      token: restricted,
      body: validEmail({ from: 'a@example.com' }),
    });
    expect(ok.status).toBe(200);
    const refused = await call('POST', `${stack.api}/emails`, {
      token: restricted,
      body: validEmail({ from: 'a@second.example' }),
    });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error: 'permission denied', message: expect.stringContaining('second.example') });
    // The domain itself is verified: an unrestricted key of the same account may send from it.
    const unrestricted = await call('POST', `${stack.api}/emails`, {
      token: stack.apiKey,
      body: validEmail({ from: 'a@second.example' }),
    });
    expect(unrestricted.status).toBe(200);
  });

  it('sending from an unverified domain of the account is 403 naming the domain', async () => {
    await addDomain(stack, stack.accountId, 'unverified.example', false);
    const res = await call('POST', `${stack.api}/emails`, {
      token: stack.apiKey,
      body: validEmail({ from: 'a@unverified.example' }),
    });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'permission denied', message: expect.stringContaining('unverified.example') });
  });

  it('sending from a domain the account never added is 403', async () => {
    const res = await call('POST', `${stack.api}/emails`, {
      token: stack.apiKey,
      body: validEmail({ from: 'a@nowhere.example' }),
    });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'permission denied', message: expect.stringContaining('nowhere.example') });
  });

  it('sending from a domain verified by another account is 403', async () => {
    const other = await createSender(stack, 'other', 'other-account.example');
    const own = await call('POST', `${stack.api}/emails`, {
      token: other.key,
      body: validEmail({ from: 'a@other-account.example' }),
    });
    expect(own.status).toBe(200);
    const res = await call('POST', `${stack.api}/emails`, {
      token: stack.apiKey,
      body: validEmail({ from: 'a@other-account.example' }),
    });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'permission denied', message: expect.stringContaining('other-account.example') });
  });

  it('a paused account gets 403 on send and 200 on reads; healthy again, it can send', async () => {
    const s = await createSender(stack, 'to be paused', 'paused.example');
    const before = await call<{ id: string }>('POST', `${stack.api}/emails`, {
      token: s.key,
      body: validEmail({ from: 'a@paused.example' }),
    });
    expect(before.status).toBe(200);

    await admin(stack, 'PATCH', `/accounts/${s.accountId}`, { status: 'paused' });
    const send = await call('POST', `${stack.api}/emails`, {
      token: s.key,
      body: validEmail({ from: 'a@paused.example' }),
    });
    expect(send.status).toBe(403);
    expect(send.body).toEqual({ error: 'permission denied', message: expect.stringMatching(/paused/) });
    const list = await call<{ total: number }>('GET', `${stack.api}/emails`, { token: s.key });
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(1);
    expect((await call('GET', `${stack.api}/emails/${before.body.id}`, { token: s.key })).status).toBe(200);

    await admin(stack, 'PATCH', `/accounts/${s.accountId}`, { status: 'healthy' });
    expect(
      (await call('POST', `${stack.api}/emails`, { token: s.key, body: validEmail({ from: 'a@paused.example' }) }))
        .status,
    ).toBe(200);
  });
});

describe("404: another account's email", () => {
  it('answers {error: "not found", message: "email <id> not found"} for another account\'s email and an unknown one', async () => {
    const { emailId } = await senderWithEmail('owner', 'owner.example');

    const foreign = await call('GET', `${stack.api}/emails/${emailId}`, { token: stack.apiKey });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ error: 'not found', message: `email ${emailId} not found` });

    const list = await call<{ data: { id: string }[] }>('GET', `${stack.api}/emails?page_size=100`, {
      token: stack.apiKey,
    });
    expect(list.body.data.map((e) => e.id)).not.toContain(emailId);

    const unknown = await call('GET', `${stack.api}/emails/em_nonexistent`, { token: stack.apiKey });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'not found', message: 'email em_nonexistent not found' });
  });
});

describe('management API authorization', () => {
  it.each([
    ['missing', {}],
    ['wrong', { token: 'adm_wrong-token' }],
    ['an API key instead of the admin token', 'apiKey'],
    ['malformed (double space)', { headers: { authorization: `Bearer  ${ADMIN_TOKEN}` } }],
    ['malformed (no Bearer prefix)', { headers: { authorization: ADMIN_TOKEN } }],
  ] as const)('answers 401 when the admin token is %s', async (_name, auth) => {
    const opts = auth === 'apiKey' ? { token: stack.apiKey } : auth;
    for (const [method, path, body] of [
      ['GET', '/accounts', undefined],
      ['POST', '/accounts', { name: 'x' }],
      ['GET', `/accounts/${stack.accountId}`, undefined],
      ['PATCH', `/accounts/${stack.accountId}`, { status: 'banned' }],
      ['GET', `/accounts/${stack.accountId}/api-keys`, undefined],
    ] as const) {
      const res = await call(method, `${stack.admin}${path}`, { ...opts, ...(body !== undefined ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.body.error).toBe('unauthorized');
      expect(typeof res.body.message).toBe('string');
    }
    // Nothing was changed by the refused calls.
    const account = await admin(stack, 'GET', `/accounts/${stack.accountId}`);
    expect(account.body.status).toBe('healthy');
  });
});
