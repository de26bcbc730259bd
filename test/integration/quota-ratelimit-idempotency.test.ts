import { beforeAll, describe, expect, it } from 'vitest';
import { admin, createAccount, createKey, createSender, addDomain } from '../helpers/admin-fixtures.js';
import { call, eventually, validEmail } from '../helpers/http.js';
import { useStack } from '../helpers/use-stack.js';

const stack = useStack();

const nextUtcMidnight = (d: Date) =>
  new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)).toISOString();
const sentToday = async (accountId: string) =>
  (await admin<{ sent_today: number }>(stack, 'GET', `/accounts/${accountId}`)).body.sent_today;

describe('daily quota', () => {
  it('a new account has 100 a day; verifying its first domain raises it to 1,000', async () => {
    const id = await createAccount(stack, 'fresh');
    expect((await admin(stack, 'GET', `/accounts/${id}`)).body.daily_quota).toBe(100);
    await addDomain(stack, id, 'fresh.example');
    expect((await admin(stack, 'GET', `/accounts/${id}`)).body.daily_quota).toBe(1000);
  });

  it('when used up, sends are 429 with only the spec error text; reads still work', async () => {
    const s = await createSender(stack, 'small quota', 'quota.example');
    const patched = await admin(stack, 'PATCH', `/accounts/${s.accountId}`, { daily_quota: 3 });
    expect(patched.body.daily_quota).toBe(3);
    const mail = (i: number) => validEmail({ from: 'q@quota.example', subject: `quota ${i}` });

    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const ok = await call<{ id: string }>('POST', `${stack.api}/emails`, { token: s.key, body: mail(i) });
      expect(ok.status).toBe(200);
      ids.push(ok.body.id);
    }
    expect(await sentToday(s.accountId)).toBe(3);

    const before = new Date();
    const refused = await call('POST', `${stack.api}/emails`, { token: s.key, body: mail(3) });
    const after = new Date();
    expect(refused.status).toBe(429);
    expect(Object.keys(refused.body)).toEqual(['error']);
    expect([before, after].map((d) => `daily quota exceeded (3/3), resets at ${nextUtcMidnight(d)}`)).toContain(
      refused.body.error,
    );
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(86_400);

    // Refused again (not counted): still 3/3.
    const again = await call('POST', `${stack.api}/emails`, { token: s.key, body: mail(4) });
    expect(again.status).toBe(429);
    expect(again.body.error).toMatch(/^daily quota exceeded \(3\/3\), resets at \d{4}-\d\d-\d\dT00:00:00\.000Z$/);
    expect(await sentToday(s.accountId)).toBe(3);

    // Reads are not blocked.
    const list = await call<{ total: number; data: { id: string }[] }>('GET', `${stack.api}/emails`, { token: s.key });
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(3);
    expect(list.body.data.map((e) => e.id).sort()).toEqual([...ids].sort());
    expect((await call('GET', `${stack.api}/emails/${ids[0]}`, { token: s.key })).status).toBe(200);

    // Raising the quota lets sending continue at once.
    await admin(stack, 'PATCH', `/accounts/${s.accountId}`, { daily_quota: 4 });
    expect((await call('POST', `${stack.api}/emails`, { token: s.key, body: mail(5) })).status).toBe(200);
    const full = await call('POST', `${stack.api}/emails`, { token: s.key, body: mail(6) });
    expect(full.status).toBe(429);
    expect(full.body.error).toMatch(/^daily quota exceeded \(4\/4\), /);
  });

  it('a refused send (validation, permission) does not use quota', async () => {
    const s = await createSender(stack, 'no waste', 'nowaste.example');
    await admin(stack, 'PATCH', `/accounts/${s.accountId}`, { daily_quota: 1 });
    expect(
      (
        await call('POST', `${stack.api}/emails`, {
          token: s.key,
          body: validEmail({ from: 'a@nowaste.example', subject: '' }),
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await call('POST', `${stack.api}/emails`, {
          token: s.key,
          body: validEmail({ from: 'a@unverified-here.example' }),
        })
      ).status,
    ).toBe(403);
    expect(await sentToday(s.accountId)).toBe(0);
    expect(
      (await call('POST', `${stack.api}/emails`, { token: s.key, body: validEmail({ from: 'a@nowaste.example' }) }))
        .status,
    ).toBe(200);
  });

  it('quotas are per account', async () => {
    const a = await createSender(stack, 'quota a', 'quota-a.example');
    const b = await createSender(stack, 'quota b', 'quota-b.example');
    await admin(stack, 'PATCH', `/accounts/${a.accountId}`, { daily_quota: 1 });
    expect(
      (await call('POST', `${stack.api}/emails`, { token: a.key, body: validEmail({ from: 'x@quota-a.example' }) }))
        .status,
    ).toBe(200);
    expect(
      (await call('POST', `${stack.api}/emails`, { token: a.key, body: validEmail({ from: 'x@quota-a.example' }) }))
        .status,
    ).toBe(429);
    expect(
      (await call('POST', `${stack.api}/emails`, { token: b.key, body: validEmail({ from: 'x@quota-b.example' }) }))
        .status,
    ).toBe(200);
  });

  it('concurrent sends share a statement that counts them (migration 0037): exactly the quota is stored and counted, each of the rest refused whole', async () => {
    const s = await createSender(stack, 'concurrent quota', 'concurrent-quota.example');
    await admin(stack, 'PATCH', `/accounts/${s.accountId}`, { daily_quota: 7 });
    const sends = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call<{ id: string }>('POST', `${stack.api}/emails`, {
          token: s.key,
          body: validEmail({ from: 'c@concurrent-quota.example', subject: `concurrent ${i}` }),
        }),
      ),
    );
    expect(sends.map((r) => r.status).sort()).toEqual([...Array(7).fill(200), ...Array(13).fill(429)]);
    for (const r of sends.filter((r) => r.status === 429))
      expect(r.body).toEqual({ error: expect.stringMatching(/^daily quota exceeded \(7\/7\), resets at /) });
    expect(await sentToday(s.accountId)).toBe(7);
    const list = await call<{ total: number; data: { id: string }[] }>('GET', `${stack.api}/emails`, { token: s.key });
    expect(list.body.data.map((e) => e.id).sort()).toEqual(
      sends
        .filter((r) => r.status === 200)
        .map((r) => r.body.id)
        .sort(),
    );
  });

  it('a quota of 0 refuses the first send with 0/0', async () => {
    const s = await createSender(stack, 'zero', 'zero.example');
    await admin(stack, 'PATCH', `/accounts/${s.accountId}`, { daily_quota: 0 });
    const res = await call('POST', `${stack.api}/emails`, {
      token: s.key,
      body: validEmail({ from: 'x@zero.example' }),
    });
    expect(res.status).toBe(429);
    expect(res.body.error).toMatch(/^daily quota exceeded \(0\/0\), resets at /);
  });
});

// The account the Idempotency-Key tests send from (both blocks), its POST /emails with an optional key, and how
// many copies of an email arrived.
let s: Awaited<ReturnType<typeof createSender>>;
beforeAll(async () => {
  s = await createSender(stack, 'idempotent', 'idem.example');
});
const post = (key: string | undefined, body: unknown) =>
  call<{ id: string; message_id: string; status: string }>('POST', `${stack.api}/emails`, {
    token: s.key,
    body,
    ...(key !== undefined ? { headers: { 'idempotency-key': key } } : {}),
  });
const arrivedCount = (id: string) => stack.sink.messages.filter((m) => m.messageId.startsWith(`<${id}@`)).length;

describe('Idempotency-Key', () => {
  it('the same key with the same body answers the first answer again and sends once', async () => {
    const body = validEmail({ from: 'i@idem.example', subject: 'idempotent once', to: ['once@example.net'] });
    const usedBefore = await sentToday(s.accountId);
    const first = await post('order-42', body);
    expect(first.status).toBe(200);
    const second = await post('order-42', body);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(second.text).toBe(first.text);

    // The first one arrives; a control email sent after the replay arrives too, and still only one copy.
    await eventually(async () => arrivedCount(first.body.id) === 1);
    const control = await post(undefined, validEmail({ from: 'i@idem.example', subject: 'control' }));
    await eventually(async () => arrivedCount(control.body.id) === 1);
    expect(stack.sink.messages.filter((m) => m.envelopeTo.includes('once@example.net'))).toHaveLength(1);

    const list = await call<{ data: { id: string; subject: string }[] }>('GET', `${stack.api}/emails?page_size=100`, {
      token: s.key,
    });
    expect(list.body.data.filter((e) => e.subject === 'idempotent once').map((e) => e.id)).toEqual([first.body.id]);
    // Quota counted once for the two requests (plus the control email).
    expect(await sentToday(s.accountId)).toBe(usedBefore + 2);
  });

  it('a replay is answered even after the email was sent', async () => {
    const body = validEmail({ from: 'i@idem.example', subject: 'replay later' });
    const first = await post('later-1', body);
    await eventually(async () => arrivedCount(first.body.id) === 1);
    const replay = await post('later-1', body);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({ id: first.body.id, message_id: '', status: 'pending' });
  });

  it('the same key with a different body is 400 and sends nothing', async () => {
    const first = await post('order-43', validEmail({ from: 'i@idem.example', subject: 'first body' }));
    expect(first.status).toBe(200);
    const other = await post('order-43', validEmail({ from: 'i@idem.example', subject: 'second body' }));
    expect(other.status).toBe(400);
    expect(other.body).toEqual({ error: 'validation error', message: expect.stringContaining('Idempotency-Key') });
    const list = await call<{ data: { subject: string }[] }>('GET', `${stack.api}/emails?page_size=100`, {
      token: s.key,
    });
    expect(list.body.data.filter((e) => e.subject === 'second body')).toEqual([]);
  });

  it('different keys with the same body are two emails', async () => {
    const body = validEmail({ from: 'i@idem.example', subject: 'two keys' });
    const a = await post('key-a', body);
    const b = await post('key-b', body);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(a.body.id).not.toBe(b.body.id);
    await eventually(async () => arrivedCount(a.body.id) === 1 && arrivedCount(b.body.id) === 1);
    const list = await call<{ data: { subject: string }[] }>('GET', `${stack.api}/emails?page_size=100`, {
      token: s.key,
    });
    expect(list.body.data.filter((e) => e.subject === 'two keys')).toHaveLength(2);
  });
});

// A key across accounts, after a refused request, malformed, and after the quota is used up.
describe('Idempotency-Key', () => {
  it('keys are per account: another account may use the same key', async () => {
    const other = await createSender(stack, 'idem other', 'idem-other.example');
    const mine = await post('shared-key', validEmail({ from: 'i@idem.example', subject: 'mine' }));
    const theirs = await call<{ id: string }>('POST', `${stack.api}/emails`, {
      token: other.key,
      headers: { 'idempotency-key': 'shared-key' },
      body: validEmail({ from: 'i@idem-other.example', subject: 'theirs' }),
    });
    expect(mine.status).toBe(200);
    expect(theirs.status).toBe(200);
    expect(theirs.body.id).not.toBe(mine.body.id);
  });

  it('a request refused for validation does not use up the key', async () => {
    const bad = await post('fix-and-retry', validEmail({ from: 'i@idem.example', subject: '' }));
    expect(bad.status).toBe(400);
    const good = await post('fix-and-retry', validEmail({ from: 'i@idem.example', subject: 'fixed' }));
    expect(good.status).toBe(200);
  });

  it('a malformed Idempotency-Key is 400', async () => {
    const res = await post('x'.repeat(300), validEmail({ from: 'i@idem.example' }));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'validation error', message: expect.stringContaining('Idempotency-Key') });
  });

  it('a replay is answered even when the quota is used up since (it sends nothing)', async () => {
    const q = await createSender(stack, 'idem quota', 'idem-quota.example');
    await admin(stack, 'PATCH', `/accounts/${q.accountId}`, { daily_quota: 1 });
    const body = validEmail({ from: 'i@idem-quota.example' });
    const opts = { token: q.key, headers: { 'idempotency-key': 'quota-replay' }, body };
    const first = await call('POST', `${stack.api}/emails`, opts);
    expect(first.status).toBe(200);
    const replay = await call('POST', `${stack.api}/emails`, opts);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(first.body);
    const fresh = await call('POST', `${stack.api}/emails`, { token: q.key, body });
    expect(fresh.status).toBe(429);
    expect(fresh.body.error).toMatch(/^daily quota exceeded \(1\/1\)/);
  });
});

describe('rate limit (MAILER_RATE_LIMIT=5)', () => {
  const limited = useStack({ MAILER_RATE_LIMIT: '5' });

  it('the 6th rapid request is 429 with Retry-After and RateLimit-* headers; successes carry RateLimit-* too', async () => {
    const { key } = await createKey(limited, limited.accountId, 'all');
    // Requests one after another until the first 429. The bucket holds 5 and refills one token every 200 ms, so
    // the 6th is refused when the six take under 200 ms (they take a few ms); on a loaded machine at most
    // elapsed/200 ms more get through, never fewer than 5.
    const started = Date.now();
    const passed: Headers[] = [];
    let refused: Awaited<ReturnType<typeof call>> | undefined;
    for (let i = 0; i < 30 && !refused; i++) {
      const res = await call('POST', `${limited.api}/emails`, {
        token: key,
        body: validEmail({ subject: `burst ${i}` }),
      });
      if (res.status === 429) refused = res;
      else {
        expect(res.status).toBe(200);
        passed.push(res.headers);
      }
    }
    const elapsed = Date.now() - started;
    expect(refused, 'no request was refused').toBeDefined();
    expect(passed.length).toBeGreaterThanOrEqual(5);
    expect(passed.length).toBeLessThanOrEqual(5 + Math.floor(elapsed / 200));
    if (elapsed < 200) expect(passed).toHaveLength(5);

    for (const h of passed) {
      expect(h.get('ratelimit-limit')).toBe('5');
      expect(h.get('ratelimit-remaining')).toMatch(/^[0-4]$/);
      expect(h.get('ratelimit-reset')).toMatch(/^\d+$/);
    }
    if (elapsed < 200) expect(passed.map((h) => h.get('ratelimit-remaining'))).toEqual(['4', '3', '2', '1', '0']);
    expect(passed[0]!.get('ratelimit-remaining')).toBe('4');
    // The last answer before the refusal had nothing left.
    expect(passed.at(-1)!.get('ratelimit-remaining')).toBe('0');

    const sixth = refused!;
    expect(sixth.body).toEqual({ error: 'too many requests', message: 'Rate limit exceeded' });
    const retryAfter = Number(sixth.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(sixth.headers.get('ratelimit-limit')).toBe('5');
    expect(sixth.headers.get('ratelimit-remaining')).toBe('0');
    expect(sixth.headers.get('ratelimit-reset')).toMatch(/^\d+$/);

    // The refused send was not stored; and the limit is per key: the account's other key is not limited.
    const list = await call<{ data: { subject: string }[] }>('GET', `${limited.api}/emails?page_size=100`, {
      token: limited.apiKey,
    });
    expect(list.status).toBe(200);
    const stored = list.body.data.map((e) => e.subject).filter((subject) => subject.startsWith('burst '));
    expect(stored.sort()).toEqual(passed.map((_, i) => `burst ${i}`).sort());

    // After Retry-After the key may send again.
    await new Promise((r) => setTimeout(r, retryAfter * 1000));
    const later = await call('POST', `${limited.api}/emails`, { token: key, body: validEmail() });
    expect(later.status).toBe(200);
    expect(later.headers.get('ratelimit-limit')).toBe('5');
    expect(later.headers.get('ratelimit-remaining')).toMatch(/^\d+$/);
  });

  it('a burst of concurrent requests gets 5 answers through and refuses the rest', async () => {
    const { key } = await createKey(limited, limited.accountId, 'read_only');
    const started = Date.now();
    const results = await Promise.all(
      Array.from({ length: 10 }, () => call('GET', `${limited.api}/emails`, { token: key })),
    );
    const elapsed = Date.now() - started;
    const ok = results.filter((r) => r.status === 200).length;
    expect(results.every((r) => r.status === 200 || r.status === 429)).toBe(true);
    expect(ok).toBeGreaterThanOrEqual(5);
    expect(ok).toBeLessThanOrEqual(5 + Math.floor(elapsed / 200));
    if (elapsed < 200) expect(ok).toBe(5);
  });
});
