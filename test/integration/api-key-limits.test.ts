import nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import { describe, expect, it } from 'vitest';
import { admin, createSender } from '../helpers/admin-fixtures.js';
import { call, validEmail } from '../helpers/http.js';
import { freePort } from '../helpers/ports.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * A key's own limits enforced (issue 27, "Limits per key"): its rate_limit is its token bucket's rate, its
 * daily_quota is counted with the account's in one transaction (a single send, a scheduled one, a batch whole,
 * SMTP submission), and from its expires_at on it is a 401.
 */
const stack = useStack(async () => ({ MAILER_SUBMISSION_PORT: String(await freePort()) }));

interface MadeKey {
  id: string;
  key: string;
}
async function keyWith(token: string, limits: Record<string, unknown>): Promise<MadeKey> {
  const res = await call<MadeKey>('POST', `${stack.api}/api-keys`, {
    token,
    body: { name: 'limited', permission: 'all', ...limits },
  });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

const sentToday = async (accountId: string) =>
  (await admin<{ sent_today: number }>(stack, 'GET', `/accounts/${accountId}`)).body.sent_today;
const keySentToday = async (token: string, keyId: string) => {
  const list = await call<{ api_keys: { id: string; usage: { sent_today: number } }[] }>(
    'GET',
    `${stack.api}/api-keys`,
    { token },
  );
  return list.body.api_keys.find((k) => k.id === keyId)!.usage.sent_today;
};

describe('rate_limit', () => {
  it("is the key's bucket: with rate_limit 2 the third request within a second is 429, RateLimit-Limit 2", async () => {
    const s = await createSender(stack, 'rate key', 'ratekey.example');
    const slow = await keyWith(s.key, { rate_limit: 2 });
    const answers = await Promise.all([0, 1, 2].map(() => call('GET', `${stack.api}/emails`, { token: slow.key })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 429]);
    for (const a of answers) expect(a.headers.get('ratelimit-limit')).toBe('2');
    const refused = answers.find((a) => a.status === 429)!;
    expect(refused.body).toEqual({ error: 'too many requests', message: 'Rate limit exceeded' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    // The account's other key keeps the service's rate, and its own bucket.
    const other = await call('GET', `${stack.api}/emails`, { token: s.key });
    expect(other.status).toBe(200);
    expect(other.headers.get('ratelimit-limit')).toBe('100');

    // A second later the bucket has refilled.
    await new Promise((r) => setTimeout(r, 1100));
    expect((await call('GET', `${stack.api}/emails`, { token: slow.key })).status).toBe(200);
  });
});

describe('daily_quota', () => {
  const mail = (from: string, i: number) => validEmail({ from, subject: `key quota ${i}` });
  const nextUtcMidnight = () => {
    const d = new Date();
    return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)).toISOString();
  };

  it("refuses a single send past the key's quota with a 429 naming it; the account's other keys still send", async () => {
    const s = await createSender(stack, 'key quota', 'keyquota.example');
    const capped = await keyWith(s.key, { daily_quota: 2 });
    for (let i = 0; i < 2; i++) {
      const ok = await call('POST', `${stack.api}/emails`, { token: capped.key, body: mail('a@keyquota.example', i) });
      expect(ok.status, ok.text).toBe(200);
    }
    const refused = await call('POST', `${stack.api}/emails`, {
      token: capped.key,
      body: mail('a@keyquota.example', 2),
    });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: `API key daily quota exceeded (2/2), resets at ${nextUtcMidnight()}` });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Scheduling is refused by the same count.
    const scheduled = await call('POST', `${stack.api}/emails/schedule`, {
      token: capped.key,
      body: { ...mail('a@keyquota.example', 3), scheduled_at: new Date(Date.now() + 3_600_000).toISOString() },
    });
    expect(scheduled.status).toBe(429);
    expect(scheduled.body.error).toMatch(/^API key daily quota exceeded \(2\/2\)/);

    // Refusals count nowhere: the account used 2, the key 2; the account's own key goes on.
    expect(await sentToday(s.accountId)).toBe(2);
    expect(await keySentToday(s.key, capped.id)).toBe(2);
    const other = await call('POST', `${stack.api}/emails`, { token: s.key, body: mail('a@keyquota.example', 4) });
    expect(other.status).toBe(200);
    expect(await sentToday(s.accountId)).toBe(3);
    expect(await keySentToday(s.key, capped.id)).toBe(2);
  });

  it("counts a scheduled email when it is scheduled, and refuses a batch past the key's quota whole", async () => {
    const s = await createSender(stack, 'key batch', 'keybatch.example');
    const capped = await keyWith(s.key, { daily_quota: 3 });
    const scheduled = await call('POST', `${stack.api}/emails/schedule`, {
      token: capped.key,
      body: { ...mail('b@keybatch.example', 0), scheduled_at: new Date(Date.now() + 3_600_000).toISOString() },
    });
    expect(scheduled.status, scheduled.text).toBe(200);
    expect(await keySentToday(s.key, capped.id)).toBe(1);

    const three = [1, 2, 3].map((i) => mail('b@keybatch.example', i));
    const refused = await call('POST', `${stack.api}/emails/batch`, { token: capped.key, body: { emails: three } });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatch(/^API key daily quota exceeded \(1\/3\), resets at /);
    expect(await keySentToday(s.key, capped.id)).toBe(1);
    expect(await sentToday(s.accountId)).toBe(1);

    const two = await call('POST', `${stack.api}/emails/batch`, {
      token: capped.key,
      body: { emails: three.slice(1) },
    });
    expect(two.status, two.text).toBe(200);
    expect(await keySentToday(s.key, capped.id)).toBe(3);
    expect(await sentToday(s.accountId)).toBe(3);
  });

  it("the account's quota still binds below the key's, and its refusal leaves the key's count as it was", async () => {
    const s = await createSender(stack, 'account binds', 'accountbinds.example');
    const capped = await keyWith(s.key, { daily_quota: 10 });
    await admin(stack, 'PATCH', `/accounts/${s.accountId}`, { daily_quota: 2 });
    const batch = [0, 1, 2].map((i) => mail('c@accountbinds.example', i));
    const refused = await call('POST', `${stack.api}/emails/batch`, { token: capped.key, body: { emails: batch } });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatch(/^daily quota exceeded \(0\/2\), resets at /);
    // Rolled back with the account's refusal: the key counted nothing.
    expect(await keySentToday(s.key, capped.id)).toBe(0);
    const ok = await call('POST', `${stack.api}/emails/batch`, {
      token: capped.key,
      body: { emails: batch.slice(1) },
    });
    expect(ok.status, ok.text).toBe(200);
    expect(await keySentToday(s.key, capped.id)).toBe(2);
    expect(await sentToday(s.accountId)).toBe(2);
  });

  it("holds over SMTP submission: the message past the key's quota is 452 4.4.5 naming it", async () => {
    const s = await createSender(stack, 'key smtp', 'keysmtp.example');
    const capped = await keyWith(s.key, { daily_quota: 1 });
    const url = new URL(stack.mailer.submissionUrl!);
    const transport = nodemailer.createTransport({
      host: url.hostname,
      port: Number(url.port),
      secure: false,
      requireTLS: true,
      tls: { rejectUnauthorized: false },
      auth: { user: 'any', pass: capped.key },
    } satisfies SMTPTransport.Options);
    const message = (i: number) => ({
      from: 'smtp@keysmtp.example',
      to: 'rcpt@example.net',
      subject: `smtp ${i}`,
      text: 'hi',
    });
    const first = await transport.sendMail(message(0));
    expect(first.response).toMatch(/^250 /);
    const second = (await transport.sendMail(message(1)).then(
      () => undefined,
      (e: unknown) => e,
    )) as { responseCode?: number; response?: string } | undefined;
    transport.close();
    expect(second?.responseCode).toBe(452);
    expect(second?.response).toMatch(/4\.4\.5 API key daily quota exceeded \(1\/1\)/);
    expect(await keySentToday(s.key, capped.id)).toBe(1);
    expect(await sentToday(s.accountId)).toBe(1);
  });
});

describe('expires_at', () => {
  it('a key expiring in 2 s works until then, and is a 401 saying it expired from that moment', async () => {
    const s = await createSender(stack, 'expiring', 'expiring.example');
    const expiresAt = new Date(Date.now() + 2000);
    const brief = await keyWith(s.key, { expires_at: expiresAt.toISOString() });
    const before = await call('GET', `${stack.api}/emails`, { token: brief.key });
    expect(before.status).toBe(200);
    await new Promise((r) => setTimeout(r, Math.max(0, expiresAt.getTime() - Date.now()) + 100));
    const after = await call('GET', `${stack.api}/emails`, { token: brief.key });
    expect(after.status).toBe(401);
    expect(after.body).toEqual({
      error: 'unauthorized',
      message: `This API key expired at ${expiresAt.toISOString()}`,
    });
    const send = await call('POST', `${stack.api}/emails`, {
      token: brief.key,
      body: validEmail({ from: 'x@expiring.example' }),
    });
    expect(send.status).toBe(401);
    // Still listed, with its expiry, for the account to see and delete.
    const list = await call<{ api_keys: { id: string; expires_at?: string }[] }>('GET', `${stack.api}/api-keys`, {
      token: s.key,
    });
    expect(list.body.api_keys.find((k) => k.id === brief.id)?.expires_at).toBe(expiresAt.toISOString());
  });
});
