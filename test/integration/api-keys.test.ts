import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { admin, createAccount, createKey, createSender } from '../helpers/admin-fixtures.js';
import { bearer, expectSameError, failed, ok, rpc, useGrpcClients } from '../helpers/grpc-client.js';
import { call, expectValidationError, validEmail } from '../helpers/http.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { ISO_MS as ISO } from '../helpers/time.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * An account's API keys over the public API (CONTRACT.md "Self-service"): made, listed and deleted with a key of
 * the account, as the management API does with the account in the path; and the limits a key may carry.
 */
const stack = useStack();
const clients = useGrpcClients(stack);

type Key = Record<string, unknown> & { id: string };
const keys = (token: string, method: string, path = '', body?: unknown) =>
  call<Record<string, unknown>>(method, `${stack.api}/api-keys${path}`, {
    token,
    ...(body !== undefined ? { body } : {}),
  });

describe('POST, GET and DELETE /api-keys', () => {
  it('a key of permission all makes a key (shown once), lists the keys with total and usage, and deletes one', async () => {
    const s = await createSender(stack, 'self keys', 'selfkeys.example');
    const created = await keys(s.key, 'POST', '', {
      name: 'ci',
      permission: 'send_only',
      allowed_domains: ['SelfKeys.Example'],
      rate_limit: 7,
      daily_quota: 50,
      expires_at: '2099-01-01T00:00:00+01:00',
    });
    expect(created.status, created.text).toBe(200);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^key_[0-9a-z]{26}$/),
      name: 'ci',
      permission: 'send_only',
      allowed_domains: ['selfkeys.example'],
      created_at: expect.stringMatching(ISO),
      key: expect.stringMatching(/^mk_/),
      rate_limit: 7,
      daily_quota: 50,
      expires_at: '2098-12-31T23:00:00.000Z',
    });
    const key = created.body.key as string;

    // The new key works, and within its account only.
    const sent = await call('POST', `${stack.api}/emails`, {
      token: key,
      body: validEmail({ from: 'app@selfkeys.example' }),
    });
    expect(sent.status, sent.text).toBe(200);

    const list = await call<{ api_keys: Key[]; total: number }>('GET', `${stack.api}/api-keys`, { token: s.key });
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(key);
    expect(list.body.total).toBe(2);
    expect(list.body.api_keys.map((k) => k.id)).toEqual([s.keyId, created.body.id].sort());
    const item = list.body.api_keys.find((k) => k.id === created.body.id)!;
    expect(item).toEqual({
      id: created.body.id,
      name: 'ci',
      permission: 'send_only',
      allowed_domains: ['selfkeys.example'],
      created_at: created.body.created_at,
      rate_limit: 7,
      daily_quota: 50,
      expires_at: '2098-12-31T23:00:00.000Z',
      last_used_at: expect.stringMatching(ISO),
      usage: { request_count: 1, email_sent_count: 1, error_rate: 0, sent_today: 1 },
    });
    // A key without limits shows none (the account's apply), and no sent_today of its own is counted.
    const own = list.body.api_keys.find((k) => k.id === s.keyId)!;
    expect(Object.keys(own).filter((f) => ['rate_limit', 'daily_quota', 'expires_at'].includes(f))).toEqual([]);
    expect(own.usage).toMatchObject({ sent_today: 0 });

    // The management API lists the same keys, limits and usage.
    const adminList = await admin<{ api_keys: Key[]; total: number }>(
      stack,
      'GET',
      `/accounts/${s.accountId}/api-keys`,
    );
    expect(adminList.body.total).toBe(2);
    expect(adminList.body.api_keys.find((k) => k.id === created.body.id)).toEqual({
      ...item,
      // One more request: the list above.
      last_used_at: expect.stringMatching(ISO),
    });

    const deleted = await keys(s.key, 'DELETE', `/${created.body.id}`);
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toEqual({ success: true, message: `API key ${created.body.id} deleted` });
    expect((await call('GET', `${stack.api}/emails`, { token: key })).status).toBe(401);
    const after = await call<{ api_keys: Key[]; total: number }>('GET', `${stack.api}/api-keys`, { token: s.key });
    expect(after.body.total).toBe(1);
    expect(after.body.api_keys.map((k) => k.id)).toEqual([s.keyId]);
  });

  it('pages with page and page_size; total counts every key', async () => {
    const s = await createSender(stack, 'paged keys', 'pagedkeys.example');
    for (let i = 0; i < 4; i++) await createKey(stack, s.accountId, 'read_only');
    const page = (p: number) =>
      call<{ api_keys: Key[]; total: number }>('GET', `${stack.api}/api-keys?page=${p}&page_size=2`, { token: s.key });
    const [one, two, three] = [await page(1), await page(2), await page(3)];
    expect([one.body.total, two.body.total, three.body.total]).toEqual([5, 5, 5]);
    expect([one, two, three].map((r) => r.body.api_keys.length)).toEqual([2, 2, 1]);
    const ids = [one, two, three].flatMap((r) => r.body.api_keys.map((k) => k.id));
    expect(new Set(ids).size).toBe(5);
    expect(ids).toEqual([...ids].sort());
    const tooBig = await call('GET', `${stack.api}/api-keys?page_size=1000`, { token: s.key });
    expectValidationError(tooBig, 'page_size 1000', /page_size/);
  });

  it('reads need all or read_only, writes all: other permissions are 403', async () => {
    const accountId = await createAccount(stack, 'key permissions');
    const all = await createKey(stack, accountId, 'all');
    const readOnly = await createKey(stack, accountId, 'read_only');
    const sendOnly = await createKey(stack, accountId, 'send_only');

    expect((await keys(readOnly.key, 'GET')).status).toBe(200);
    expect((await keys(all.key, 'GET')).status).toBe(200);
    const sendOnlyList = await keys(sendOnly.key, 'GET');
    expect(sendOnlyList.status).toBe(403);
    expect(sendOnlyList.body).toEqual({ error: 'permission denied', message: expect.stringContaining('API keys') });

    for (const token of [readOnly.key, sendOnly.key]) {
      const create = await keys(token, 'POST', '', { name: 'x', permission: 'all' });
      expect(create.status).toBe(403);
      expect(create.body.error).toBe('permission denied');
      const del = await keys(token, 'DELETE', `/${all.id}`);
      expect(del.status).toBe(403);
    }
    // Nothing was made or deleted.
    expect((await keys(all.key, 'GET')).body.total).toBe(3);
    expect((await keys(all.key, 'GET')).status).toBe(200);
  });

  it("another account's key is a 404 in the same words as an unknown one, and stays", async () => {
    const mine = await createSender(stack, 'keys mine', 'keysmine.example');
    const theirs = await createSender(stack, 'keys theirs', 'keystheirs.example');
    const foreign = await keys(mine.key, 'DELETE', `/${theirs.keyId}`);
    const unknown = await keys(mine.key, 'DELETE', '/key_00000000000000000000000000');
    expect(foreign.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(foreign.body).toEqual({ error: 'not found', message: `API key ${theirs.keyId} not found` });
    expect(unknown.body).toEqual({ error: 'not found', message: 'API key key_00000000000000000000000000 not found' });
    // Their key still works; mine lists only mine.
    expect((await call('GET', `${stack.api}/emails`, { token: theirs.key })).status).toBe(200);
    const listed = await call<{ api_keys: Key[] }>('GET', `${stack.api}/api-keys`, { token: mine.key });
    expect(listed.body.api_keys.map((k) => k.id)).toEqual([mine.keyId]);
  });

  it('a key may delete itself: that answer is given, the next request is a 401', async () => {
    const s = await createSender(stack, 'self delete', 'selfdelete.example');
    const gone = await keys(s.key, 'DELETE', `/${s.keyId}`);
    expect(gone.status, gone.text).toBe(200);
    expect(gone.body).toEqual({ success: true, message: `API key ${s.keyId} deleted` });
    const next = await keys(s.key, 'GET');
    expect(next.status).toBe(401);
  });
});

describe("a key's limits when it is made", () => {
  it('rate_limit above MAILER_RATE_LIMIT, daily_quota above the account quota, an expiry not in the future: 400 naming the field', async () => {
    const s = await createSender(stack, 'limit checks', 'limitchecks.example');
    const quota = (await admin<{ daily_quota: number }>(stack, 'GET', `/accounts/${s.accountId}`)).body.daily_quota;
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['rate_limit 0', { rate_limit: 0 }, /^rate_limit must be from 1 to 100 requests per second/],
      ['rate_limit above the service', { rate_limit: 101 }, /^rate_limit must be from 1 to 100 .*; got 101$/],
      [
        'daily_quota above the account',
        { daily_quota: quota + 1 },
        new RegExp(`^daily_quota must be from 0 to ${quota} `),
      ],
      ['daily_quota negative', { daily_quota: -1 }, /^daily_quota must be from 0/],
      [
        'expires_at past',
        { expires_at: '2020-01-01T00:00:00Z' },
        /^expires_at: 2020-01-01T00:00:00.000Z is not in the future$/,
      ],
      [
        'expires_at now-ish',
        { expires_at: new Date(Date.now() - 1000).toISOString() },
        /^expires_at: .* is not in the future$/,
      ],
      ['expires_at without a zone', { expires_at: '2099-01-01T00:00:00' }, /^expires_at: .* is not an ISO 8601 time/],
      ['expires_at not a time', { expires_at: 'tomorrow' }, /^expires_at: "tomorrow" is not an ISO 8601 time/],
    ];
    for (const [what, limits, message] of cases) {
      const body = { name: what, permission: 'all', ...limits };
      expectValidationError(await keys(s.key, 'POST', '', body), `public: ${what}`, message);
      expectValidationError(
        await call('POST', `${stack.admin}/accounts/${s.accountId}/api-keys`, {
          token: ADMIN_TOKEN,
          body,
        }),
        `admin: ${what}`,
        message,
      );
    }
    expect((await keys(s.key, 'GET')).body.total).toBe(1);

    // At the bounds, accepted: the service's rate, the account's whole quota, and 0 (a key that may not send).
    const edge = await keys(s.key, 'POST', '', {
      name: 'edge',
      permission: 'all',
      rate_limit: 100,
      daily_quota: quota,
    });
    expect(edge.status, edge.text).toBe(200);
    expect(edge.body).toMatchObject({ rate_limit: 100, daily_quota: quota });
    const none = await keys(s.key, 'POST', '', { name: 'none', permission: 'all', daily_quota: 0 });
    expect(none.status).toBe(200);
    const refused = await call('POST', `${stack.api}/emails`, {
      token: none.body.key as string,
      body: validEmail({ from: 'a@limitchecks.example' }),
    });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatch(/^API key daily quota exceeded \(0\/0\), resets at /);
  });
});

describe('over gRPC (the same handlers)', () => {
  it("CreateApiKey, ListApiKeys and DeleteApiKey; the key's rate_limit is its bucket; errors as over REST", async () => {
    const s = await createSender(stack, 'grpc keys', 'grpckeys.example');
    const md = bearer(s.key);
    const made = ok(
      await rpc(clients.email, 'CreateApiKey', { name: 'grpc', permission: 'read_only', rate_limit: 2 }, md),
    );
    expect(made).toMatchObject({
      id: expect.stringMatching(/^key_/),
      rate_limit: 2,
      key: expect.stringMatching(/^mk_/),
    });
    const listed = ok(await rpc(clients.email, 'ListApiKeys', { page: 1, page_size: 10 }, md));
    expect(listed.total).toBe(2);
    expect((listed.api_keys as Key[]).find((k) => k.id === made.id)).toMatchObject({ rate_limit: 2 });

    // Its own rate over gRPC too: the third call within the second is RESOURCE_EXHAUSTED, ratelimit-limit 2.
    const slow = bearer(made.key as string);
    const calls = await Promise.all([0, 1, 2].map(() => rpc(clients.email, 'ListApiKeys', {}, slow)));
    const refused = calls.filter((c) => !c.ok).map((c) => failed(c));
    expect(refused).toHaveLength(1);
    expect(grpc.status[refused[0]!.code]).toBe('RESOURCE_EXHAUSTED');
    expect(refused[0]!.metadata.get('ratelimit-limit')).toEqual(['2']);

    const tooFast = failed(
      await rpc(clients.email, 'CreateApiKey', { name: 'x', permission: 'all', rate_limit: 101 }, md),
    );
    const tooFastRest = await keys(s.key, 'POST', '', { name: 'x', permission: 'all', rate_limit: 101 });
    expectSameError(tooFast, grpc.status.INVALID_ARGUMENT, tooFastRest.body as { error: string; message: string });

    const intruder = await createSender(stack, 'grpc intruder', 'grpcintruder.example');
    const hidden = failed(await rpc(clients.email, 'DeleteApiKey', { id: made.id }, bearer(intruder.key)));
    expectSameError(hidden, grpc.status.NOT_FOUND, {
      error: 'not found',
      message: `API key ${String(made.id)} not found`,
    });
    expect(ok(await rpc(clients.email, 'DeleteApiKey', { id: made.id }, md))).toEqual({
      success: true,
      message: `API key ${String(made.id)} deleted`,
    });
  });
});
