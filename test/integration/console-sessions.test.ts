import crypto from 'node:crypto';
import http from 'node:http';
import * as grpc from '@grpc/grpc-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_AUTH_LIMITS } from '../../src/services/auth-throttle.js';
import { admin, createKey, createSender } from '../helpers/admin-fixtures.js';
import { bearer, failed, loadClients, rpc } from '../helpers/grpc-client.js';
import { call, eventually, validEmail, type JsonResponse } from '../helpers/http.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * The console's sessions (docs/operations.md, "Console sessions"): POST|GET|DELETE /console/session, the HttpOnly cookie
 * they set, and that cookie as a credential of the REST APIs: an account session acts as its key on the email
 * API, the operator's on the management API, never across; every request it authenticates carries the CSRF
 * token; an Authorization header is judged alone; a deleted key's or an expired session is refused at once.
 */
const stack = useStack();
let sql: postgres.Sql;

beforeAll(() => {
  sql = postgres(stack.databaseUrl, { max: 1, onnotice: () => {} });
});
afterAll(async () => {
  await sql?.end();
});

interface SessionAnswer {
  kind: 'operator' | 'account';
  account?: { id: string; name: string };
  csrf_token: string;
  expires_at: string;
}
interface Session {
  cookie: string;
  csrf: string;
  setCookie: string;
  body: SessionAnswer;
}

const sessionUrl = () => `${stack.mailer.restUrl}/console/session`;

async function signIn(token: string): Promise<Session> {
  const res = await call<SessionAnswer>('POST', sessionUrl(), { body: { token } });
  expect(res.status, res.text).toBe(200);
  const setCookie = res.headers.get('set-cookie') ?? '';
  const cookie = setCookie.split(';')[0]!;
  expect(cookie).toMatch(/^mailer_console=[A-Za-z0-9_-]{43}$/);
  return { cookie, csrf: res.body.csrf_token, setCookie, body: res.body };
}

/** A call authenticated by the session cookie, with its CSRF token unless `csrf` says otherwise. */
const withCookie = <T = Record<string, unknown>>(
  s: Session,
  method: string,
  url: string,
  options: { csrf?: string | null; body?: unknown; headers?: Record<string, string> } = {},
): Promise<JsonResponse<T>> => {
  const headers: Record<string, string> = { cookie: s.cookie, ...options.headers };
  const csrf = options.csrf === undefined ? s.csrf : options.csrf;
  if (csrf !== null) headers['x-csrf-token'] = csrf;
  return call<T>(method, url, { headers, ...(options.body !== undefined ? { body: options.body } : {}) });
};

const cookieToken = (s: Session) => s.cookie.slice('mailer_console='.length);
const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest();
const operatorHash = (adminToken: string, token: string) =>
  crypto.createHmac('sha256', adminToken).update(token).digest();

describe('console sessions', () => {
  it('signs the operator in with the admin token: an HttpOnly, SameSite=Strict cookie whose token is stored only as its HMAC under the admin token', async () => {
    // Before: no one, answered 200 (the console asks at every load).
    const before = await call('GET', sessionUrl());
    expect(before.status).toBe(200);
    expect(before.body).toEqual({ kind: null });

    const s = await signIn(ADMIN_TOKEN);
    expect(s.body.kind).toBe('operator');
    expect(s.body.account).toBeUndefined();
    expect(s.csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const flags = s.setCookie.split(';').map((f) => f.trim().toLowerCase());
    expect(flags).toEqual(expect.arrayContaining(['httponly', 'samesite=strict', 'path=/', 'max-age=43200']));
    // MAILER_PUBLIC_URL is http here: a Secure cookie would never come back.
    expect(flags).not.toContain('secure');
    expect(Date.parse(s.body.expires_at) - Date.now()).toBeGreaterThan(11.9 * 3_600_000);

    const rows = await sql<{ token_hash: Buffer; api_key_id: string | null; csrf_token: string }[]>`
      select token_hash, api_key_id, csrf_token from console_sessions where csrf_token = ${s.csrf}`;
    expect(rows).toHaveLength(1);
    expect(rows[0]!.token_hash.equals(operatorHash(ADMIN_TOKEN, cookieToken(s)))).toBe(true);
    expect(rows[0]!.api_key_id).toBeNull();

    const who = await withCookie<SessionAnswer>(s, 'GET', sessionUrl(), { csrf: null });
    expect(who.status).toBe(200);
    expect(who.body).toMatchObject({ kind: 'operator', csrf_token: s.csrf });
    expect(who.headers.get('cache-control')).toBe('no-store');
  });

  it("ends an operator's sessions when the admin token changes: one made under another token signs no one in", async () => {
    // As if made before the operator replaced a leaked admin token: stored under the old token's HMAC.
    const token = crypto.randomBytes(32).toString('base64url');
    const csrf = crypto.randomBytes(32).toString('base64url');
    await sql`insert into console_sessions (token_hash, api_key_id, csrf_token, expires_at)
      values (${operatorHash('the-admin-token-before-it-was-changed-0123456789', token)}, null, ${csrf},
              now() + interval '1 hour')`;
    const old = { cookie: `mailer_console=${token}`, csrf, setCookie: '', body: {} as SessionAnswer };
    const refused = await withCookie(old, 'GET', `${stack.mailer.restUrl}/v1/mail/admin/accounts`);
    expect(refused.status).toBe(401);
    // Nor does an operator row under the token's plain SHA-256 (the form of an account session's row).
    await sql`update console_sessions set token_hash = ${sha256(token)} where csrf_token = ${csrf}`;
    expect((await withCookie(old, 'GET', `${stack.mailer.restUrl}/v1/mail/admin/accounts`)).status).toBe(401);
    // The same row under the current token's HMAC is a session: the refusals above were the token's doing.
    await sql`update console_sessions set token_hash = ${operatorHash(ADMIN_TOKEN, token)} where csrf_token = ${csrf}`;
    expect((await withCookie(old, 'GET', `${stack.mailer.restUrl}/v1/mail/admin/accounts`)).status).toBe(200);
  });

  it('refuses a wrong credential 401, a missing one 400, and a read_only or send_only key 403 saying the console needs an all key', async () => {
    const wrong = await call('POST', sessionUrl(), { body: { token: 'adm_not-the-admin-token-at-all-0123456789' } });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ error: 'unauthorized', message: 'Invalid or missing admin token' });
    const unknownKey = await call('POST', sessionUrl(), { body: { token: `mk_${'A'.repeat(43)}` } });
    expect(unknownKey.status).toBe(401);
    expect(unknownKey.body).toMatchObject({ error: 'unauthorized' });
    expect(unknownKey.headers.get('set-cookie')).toBeNull();

    // Only JSON, which no form of another site can send (login CSRF).
    const form = await call('POST', sessionUrl(), {
      rawBody: JSON.stringify({ token: ADMIN_TOKEN }),
      headers: { 'content-type': 'text/plain' },
    });
    expect(form.status).toBe(415);
    expect(form.headers.get('set-cookie')).toBeNull();

    const missing = await call('POST', sessionUrl(), { body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ error: 'validation error' });

    for (const permission of ['read_only', 'send_only'] as const) {
      const { key } = await createKey(stack, stack.accountId, permission);
      const res = await call('POST', sessionUrl(), { body: { token: key } });
      expect(res.status, permission).toBe(403);
      expect(res.body).toEqual({
        error: 'permission denied',
        message: `The console needs an API key of permission all; this key's permission is ${permission}`,
      });
      expect(res.headers.get('set-cookie')).toBeNull();
    }
  });

  it("lets the operator's session call the management API with its CSRF token only, and never the email API", async () => {
    const s = await signIn(ADMIN_TOKEN);
    const accounts = `${stack.admin}/accounts`;
    const none = await withCookie(s, 'GET', accounts, { csrf: null });
    expect(none.status).toBe(403);
    expect(none.body).toEqual({
      error: 'permission denied',
      message: 'A request authenticated by the console session must carry its CSRF token in X-CSRF-Token',
    });
    expect((await withCookie(s, 'GET', accounts, { csrf: 'x'.repeat(43) })).status).toBe(403);
    const right = await withCookie<{ accounts: { id: string }[] }>(s, 'GET', accounts);
    expect(right.status).toBe(200);
    expect(right.body.accounts.map((a) => a.id)).toContain(stack.accountId);
    // A write as well (every method needs the token; a write without it changes nothing).
    expect((await withCookie(s, 'POST', accounts, { csrf: null, body: { name: 'Forged Co' } })).status).toBe(403);
    const made = await withCookie<{ name: string }>(s, 'POST', accounts, { body: { name: 'Session Co' } });
    expect(made.status).toBe(200);
    expect(made.body.name).toBe('Session Co');
    const listed = await admin<{ accounts: { name: string }[] }>(stack, 'GET', '/accounts');
    expect(listed.body.accounts.map((a) => a.name)).not.toContain('Forged Co');

    const email = await withCookie(s, 'GET', `${stack.api}/emails`);
    expect(email.status).toBe(403);
    expect(email.body).toMatchObject({ error: 'permission denied', message: expect.stringContaining('API key') });
  });

  it('makes an account session act as its key on the email API (rate limit, usage, that account only) and never on the management API', async () => {
    const other = await createSender(stack, 'Other Co', 'other-session.test');
    const sent = await call<{ id: string }>('POST', `${stack.api}/emails`, {
      token: other.key,
      body: validEmail({ from: 'a@other-session.test' }),
    });
    expect(sent.status, sent.text).toBe(200);
    const { id: keyId, key } = await createKey(stack, stack.accountId, 'all');
    const s = await signIn(key);
    expect(s.body).toMatchObject({ kind: 'account', account: { id: stack.accountId, name: expect.any(String) } });

    const emails = await withCookie<{ data: { id: string }[] }>(s, 'GET', `${stack.api}/emails`);
    expect(emails.status, emails.text).toBe(200);
    expect(emails.headers.get('ratelimit-limit')).not.toBeNull();
    expect(emails.body.data.map((e) => e.id)).not.toContain(sent.body.id);
    const foreign = await withCookie(s, 'GET', `${stack.api}/emails/${sent.body.id}`);
    expect(foreign.status).toBe(404);
    expect((await withCookie(s, 'GET', `${stack.api}/emails`, { csrf: null })).status).toBe(403);

    // Both calls the guard admitted (the 200 and the 404) are counted in the key's usage, the 404 as an error.
    await eventually(async () => {
      const { api_keys: keys } = (
        await admin<{ api_keys: { id: string; usage: { request_count: number; error_rate: number } }[] }>(
          stack,
          'GET',
          `/accounts/${stack.accountId}/api-keys`,
        )
      ).body;
      const usage = keys.find((k) => k.id === keyId)?.usage;
      return usage?.request_count === 2 && usage.error_rate === 0.5;
    });

    const adminCall = await withCookie(s, 'GET', `${stack.admin}/accounts`);
    expect(adminCall.status).toBe(403);
    expect(adminCall.body).toMatchObject({
      error: 'permission denied',
      message: expect.stringContaining('admin token'),
    });
  });

  it('judges a request with an Authorization header by it alone, never by the cookie', async () => {
    const s = await signIn(ADMIN_TOKEN);
    const wrong = await withCookie(s, 'GET', `${stack.admin}/accounts`, {
      headers: { authorization: 'Bearer adm_wrong-token-but-a-good-cookie-0123456789' },
    });
    expect(wrong.status).toBe(401);
    const malformed = await withCookie(s, 'GET', `${stack.admin}/accounts`, { headers: { authorization: 'Basic x' } });
    expect(malformed.status).toBe(401);

    const { key } = await createKey(stack, stack.accountId, 'all');
    const a = await signIn(key);
    const keyWins = await withCookie(a, 'GET', `${stack.api}/emails`, {
      headers: { authorization: `Bearer mk_${'B'.repeat(43)}` },
    });
    expect(keyWins.status).toBe(401);
    // The admin token with an account's cookie on the management API: the token decides, and lets it in.
    const tokenWins = await withCookie(a, 'GET', `${stack.admin}/accounts`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(tokenWins.status).toBe(200);
  });

  it("refuses a deleted key's session 401 at once, and GET /console/session then answers no one", async () => {
    const { id, key } = await createKey(stack, stack.accountId, 'all');
    const s = await signIn(key);
    expect((await withCookie(s, 'GET', `${stack.api}/emails`)).status).toBe(200);
    await admin(stack, 'DELETE', `/api-keys/${id}`);
    const after = await withCookie(s, 'GET', `${stack.api}/emails`);
    expect(after.status).toBe(401);
    expect(after.body).toMatchObject({ error: 'unauthorized', message: expect.stringContaining('sign in again') });
    // The console asks who is signed in at every load: no one, answered without a failure.
    const who = await withCookie(s, 'GET', sessionUrl());
    expect(who.status).toBe(200);
    expect(who.body).toEqual({ kind: null });
  });

  it('refuses the session of a key that has expired 401 from that moment, as the key itself', async () => {
    const { id, key } = await createKey(stack, stack.accountId, 'all');
    const s = await signIn(key);
    expect((await withCookie(s, 'GET', `${stack.api}/emails`)).status).toBe(200);
    await sql`update api_keys set expires_at = now() - interval '1 second' where id = ${id}`;
    const after = await withCookie(s, 'GET', `${stack.api}/emails`);
    expect(after.status).toBe(401);
    expect(after.body).toMatchObject({ error: 'unauthorized', message: expect.stringContaining('expired') });
    expect((await call('GET', `${stack.api}/emails`, { token: key })).body).toEqual(after.body);
  });

  it('ends a session at its expiry, and purges ended sessions at the next sign-in', async () => {
    const s = await signIn(ADMIN_TOKEN);
    await sql`update console_sessions set expires_at = now() - interval '1 second' where csrf_token = ${s.csrf}`;
    expect((await withCookie(s, 'GET', sessionUrl())).body).toEqual({ kind: null });
    const refused = await withCookie(s, 'GET', `${stack.admin}/accounts`);
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({
      error: 'unauthorized',
      message: 'No console session, or it has ended: sign in again',
    });

    await signIn(ADMIN_TOKEN);
    const [ended] = await sql<
      { n: number }[]
    >`select count(*)::int as n from console_sessions where expires_at <= now()`;
    expect(ended!.n).toBe(0);
  });

  it('signs out with the CSRF token: the row deleted, the cookie cleared, the cookie refused after', async () => {
    const s = await signIn(ADMIN_TOKEN);
    expect((await withCookie(s, 'DELETE', sessionUrl(), { csrf: null })).status).toBe(403);
    const out = await withCookie(s, 'DELETE', sessionUrl());
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ success: true, message: 'Signed out' });
    expect(out.headers.get('set-cookie')).toMatch(/^mailer_console=; Path=\/; HttpOnly; SameSite=Strict; Max-Age=0/);
    const rows = await sql`select 1 from console_sessions where token_hash = ${sha256(cookieToken(s))}`;
    expect(rows).toHaveLength(0);
    expect((await withCookie(s, 'GET', `${stack.admin}/accounts`)).status).toBe(401);
    // Signing out again (an ended session) still clears the cookie.
    expect((await withCookie(s, 'DELETE', sessionUrl())).status).toBe(200);
  });

  it('ignores the cookie on gRPC: a call needs its own credential', async () => {
    const s = await signIn(ADMIN_TOKEN);
    const clients = loadClients(stack.grpcAddress);
    try {
      const res = await rpc(
        clients.admin,
        'ListAccounts',
        {},
        bearer(undefined, { cookie: s.cookie, 'x-csrf-token': s.csrf }),
      );
      expect(grpc.status[failed(res).code]).toBe('UNAUTHENTICATED');
    } finally {
      clients.admin.close();
      clients.email.close();
    }
  });

  it(`throttles wrong sign-ins like wrong admin tokens: 429 from an address past ${ADMIN_AUTH_LIMITS.perClient} failures, the right token still let in`, async () => {
    const from = '127.0.0.9';
    const post = (token: string) => postFrom(from, sessionUrl(), { token });
    for (let i = 0; i < ADMIN_AUTH_LIMITS.perClient; i++) {
      // Half guessed keys, half guessed tokens: both count.
      const guess = i % 2 === 0 ? `mk_${String(i).padStart(43, 'C')}` : `adm_guess-${i}-${'x'.repeat(32)}`;
      expect((await post(guess)).status, `attempt ${i + 1}`).toBe(401);
    }
    const throttled = await post(`mk_${'D'.repeat(43)}`);
    expect(throttled.status).toBe(429);
    expect(throttled.headers['retry-after']).toMatch(/^\d+$/);
    expect((await post(ADMIN_TOKEN)).status).toBe(200);
  });
});

/** POST JSON from the client address `from` (Linux routes all of 127/8 to loopback). */
function postFrom(
  from: string,
  url: string,
  body: unknown,
): Promise<{ status: number; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', localAddress: from, agent: false, headers: { 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}
