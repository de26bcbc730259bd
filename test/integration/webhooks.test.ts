import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhookSignature } from '../../src/webhooks/signature.js';
import { admin, createSender } from '../helpers/admin-fixtures.js';
import { call, eventually, validEmail } from '../helpers/http.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { startWebhookReceiver, type ReceivedHook, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * Webhook delivery end to end: real emails through a real SMTP server, events fanned out to a real HTTP
 * receiver through Temporal, signatures checked by an independent HMAC, retries timed.
 */
const stack = useStack({ MAILER_WEBHOOK_ALLOW_PRIVATE: '1' });
let receiver: WebhookReceiver;
const ALL_EVENTS = ['send', 'delivery', 'bounce', 'complaint', 'reject', 'open', 'click'];
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

beforeAll(async () => {
  stack.sink.refuseRecipient = (a) =>
    a.startsWith('bounce')
      ? `550 5.1.1 <${a}>: Recipient address rejected: User unknown in virtual mailbox table`
      : undefined;
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

/** A sender with its own domain and a webhook at its own path of the receiver. */
async function senderWithHook(name: string, events = ALL_EVENTS) {
  const domain = `${name}.example`;
  const s = await createSender(stack, name, domain);
  const path = `/${name}`;
  const hook = await admin<{ id: string; secret: string }>(stack, 'POST', `/accounts/${s.accountId}/webhooks`, {
    url: `${receiver.url}${path}`,
    events,
  });
  return { ...s, domain, path, webhookId: hook.body.id, secret: hook.body.secret };
}

async function send(key: string, body: Record<string, unknown>): Promise<string> {
  const res = await call<{ id: string }>('POST', `${stack.api}/emails`, { token: key, body });
  expect(res.status).toBe(200);
  return res.body.id;
}

/** The signature a receiver computes on its own: HMAC-SHA256 over `{timestamp}.{raw body}`, hex. */
const independentSignature = (secret: string, timestamp: string, raw: string) =>
  `sha256=${crypto.createHmac('sha256', secret).update(`${timestamp}.${raw}`).digest('hex')}`;

const waitHooks = (path: string, n: number, timeoutMs = 20_000) =>
  eventually(async () => (receiver.on(path).length >= n ? receiver.on(path) : undefined), timeoutMs, 20);

type Deliveries = {
  deliveries: {
    id: string;
    status: string;
    event_type: string;
    email_id: string;
    attempts: { attempt: number; status_code: number; latency_ms: number; response_excerpt: string; error: string }[];
  }[];
};

describe('event webhooks', () => {
  it("send then delivery, each with exactly the spec's headers, envelope and data, signed", async () => {
    const s = await senderWithHook('hdrs');
    const id = await send(
      s.key,
      validEmail({ from: `Hdrs <news@${s.domain}>`, to: ['Rcpt <Rcpt@Example.net>'], subject: 'webhook headers' }),
    );
    // Events of one email go out in parallel, so they may arrive in any order: receivers order by timestamp.
    const hooks = [...(await waitHooks(s.path, 2))].sort(
      (x, y) => (x.body.event === 'send' ? -1 : 1) - (y.body.event === 'send' ? -1 : 1),
    );
    expect(hooks.map((h) => h.body.event)).toEqual(['send', 'delivery']);
    const email = await call<Record<string, unknown>>('GET', `${stack.api}/emails/${id}`, { token: s.key });
    expect(email.body.status).toBe('delivered');
    for (const h of hooks) {
      const ts = h.headers['x-mail-timestamp'] as string;
      expect(h.headers['content-type']).toBe('application/json');
      expect(h.headers['x-mail-event']).toBe(h.body.event);
      expect(ts).toMatch(/^\d{10}$/);
      expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(30);
      expect(h.headers['x-mail-signature']).toBe(independentSignature(s.secret, ts, h.rawBody));
      expect(verifyWebhookSignature({ secret: s.secret, headers: h.headers, rawBody: h.rawBody })).toEqual({
        ok: true,
      });
      expect(verifyWebhookSignature({ secret: 'whsec_wrong', headers: h.headers, rawBody: h.rawBody }).ok).toBe(false);
      expect(h.headers['user-agent']).toBe('mailer-webhooks/1');
      expect(h.headers['x-mail-delivery-id']).toMatch(/^whd_[0-9a-z]+$/);
      expect(Object.keys(h.body).sort()).toEqual(['data', 'email', 'event', 'id', 'timestamp']);
      expect(h.body.id).toMatch(/^evt_[0-9a-z]{26}$/);
      expect(h.body.timestamp).toMatch(ISO);
      expect(h.body.email).toEqual({
        // The address in its canonical form: the local part as given, the domain in lower case (ASCII).
        id,
        message_id: email.body.message_id,
        from: `Hdrs <news@${s.domain}>`,
        to: ['Rcpt <Rcpt@example.net>'],
        subject: 'webhook headers',
        sent_at: expect.stringMatching(ISO),
      });
    }
    expect(hooks[0]!.body.data).toEqual({});
    expect(hooks[1]!.body.data).toEqual({
      processing_time_millis: expect.any(Number),
      recipients: ['rcpt@example.net'],
      smtp_response: expect.stringMatching(/^250 /),
    });
    expect(Date.parse(hooks[1]!.body.timestamp)).toBeGreaterThanOrEqual(Date.parse(hooks[0]!.body.timestamp));
    expect(new Set(hooks.map((h) => h.headers['x-mail-delivery-id'])).size).toBe(2);
  });

  it("a permanent refusal is a bounce with the enhanced status and the server's reply, without sent_at; only subscribed events come", async () => {
    const s = await senderWithHook('bnc', ['bounce']);
    const id = await send(
      s.key,
      validEmail({ from: `b@${s.domain}`, to: ['bounce-one@example.net'], subject: 'will bounce' }),
    );
    const [hook] = await waitHooks(s.path, 1);
    expect(hook!.body.event).toBe('bounce');
    expect(hook!.body.email).not.toHaveProperty('sent_at');
    expect(hook!.body.email!.id).toBe(id);
    expect(hook!.body.data).toEqual({
      bounce_type: 'Permanent',
      bounce_subtype: 'General',
      bounced_recipients: [
        {
          email_address: 'bounce-one@example.net',
          status: '5.1.1',
          diagnostic_code: expect.stringContaining('User unknown'),
        },
      ],
    });
    expect((await call<{ status: string }>('GET', `${stack.api}/emails/${id}`, { token: s.key })).body.status).toBe(
      'bounced',
    );
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.on(s.path).map((h) => h.body.event)).toEqual(['bounce']);
  });

  it('a receiver that fails twice gets the same event three times, 1 s then 2 s apart, and every attempt is recorded', async () => {
    const s = await senderWithHook('retry2', ['delivery']);
    receiver.respond = (h, nth) =>
      h.path === s.path && nth <= 2 ? { status: 500, body: 'try later' } : { status: 200 };
    await send(s.key, validEmail({ from: `r@${s.domain}` }));
    const hooks = await waitHooks(s.path, 3);
    expect(new Set(hooks.map((h) => h.headers['x-mail-delivery-id'])).size).toBe(1);
    expect(new Set(hooks.map((h) => h.rawBody)).size).toBe(1);
    const gaps = [hooks[1]!.arrivedAt - hooks[0]!.arrivedAt, hooks[2]!.arrivedAt - hooks[1]!.arrivedAt];
    expect(gaps[0]).toBeGreaterThanOrEqual(950);
    expect(gaps[0]).toBeLessThan(2000);
    expect(gaps[1]).toBeGreaterThanOrEqual(1950);
    expect(gaps[1]).toBeLessThan(3500);
    const listed = await eventually(async () => {
      const r = await admin<Deliveries>(stack, 'GET', `/webhooks/${s.webhookId}/deliveries`);
      return r.body.deliveries[0]?.status === 'succeeded' ? r.body.deliveries : undefined;
    });
    expect(listed).toHaveLength(1);
    expect(listed[0]!.id).toBe(hooks[0]!.headers['x-mail-delivery-id']);
    expect(listed[0]!.attempts.map((a) => [a.attempt, a.status_code, a.error])).toEqual([
      [1, 500, 'HTTP 500'],
      [2, 500, 'HTTP 500'],
      [3, 200, ''],
    ]);
    expect(listed[0]!.attempts[0]!.response_excerpt).toBe('try later');
    receiver.respond = () => ({ status: 200 });
  });
});

describe('event webhooks', () => {
  it('a receiver that always fails gets exactly 4 attempts (after 1 s, 2 s, 4 s), then the event is discarded; an operator can send it again', async () => {
    const s = await senderWithHook('discard', ['delivery']);
    let failing = true;
    receiver.respond = (h) => (h.path === s.path && failing ? { status: 503 } : { status: 200 });
    await send(s.key, validEmail({ from: `d@${s.domain}` }));
    const hooks = await waitHooks(s.path, 4, 30_000);
    const gaps = hooks.slice(1).map((h, i) => h.arrivedAt - hooks[i]!.arrivedAt);
    [1000, 2000, 4000].forEach((want, i) => {
      expect(gaps[i]).toBeGreaterThanOrEqual(want - 50);
      expect(gaps[i]).toBeLessThan(want + 1500);
    });
    const discarded = await eventually(async () => {
      const r = await admin<Deliveries>(stack, 'GET', `/webhooks/${s.webhookId}/deliveries?status=discarded`);
      return r.body.deliveries[0];
    });
    expect(discarded.attempts.map((a) => a.status_code)).toEqual([503, 503, 503, 503]);
    await new Promise((r) => setTimeout(r, 1500));
    expect(receiver.on(s.path)).toHaveLength(4);

    failing = false;
    const resent = await admin<{ status: string }>(stack, 'POST', `/webhook-deliveries/${discarded.id}/resend`, {});
    expect(resent.body.status).toBe('pending');
    const after = await waitHooks(s.path, 5);
    expect(after[4]!.headers['x-mail-delivery-id']).toBe(discarded.id);
    expect(after[4]!.rawBody).toBe(hooks[0]!.rawBody);
    const done = await eventually(async () => {
      const r = await admin<Deliveries>(stack, 'GET', `/webhooks/${s.webhookId}/deliveries`);
      return r.body.deliveries[0]?.status === 'succeeded' ? r.body.deliveries[0] : undefined;
    });
    expect(done.attempts.map((a) => [a.attempt, a.status_code])).toEqual([
      [1, 503],
      [2, 503],
      [3, 503],
      [4, 503],
      [5, 200],
    ]);
    const unknown = await call('POST', `${stack.admin}/webhook-deliveries/whd_unknown/resend`, {
      token: ADMIN_TOKEN,
      body: {},
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'not found', message: 'webhook delivery whd_unknown not found' });
    receiver.respond = () => ({ status: 200 });
  }, 60_000);

  it('a receiver slower than 10 s times out: the attempt is recorded without a status and retried', async () => {
    const s = await senderWithHook('slow', ['delivery']);
    receiver.respond = (h, nth) =>
      h.path === s.path && nth === 1 ? { status: 200, delayMs: 12_000 } : { status: 200 };
    await send(s.key, validEmail({ from: `s@${s.domain}` }));
    const hooks = await waitHooks(s.path, 2, 30_000);
    const gap = hooks[1]!.arrivedAt - hooks[0]!.arrivedAt;
    expect(gap).toBeGreaterThanOrEqual(10_900);
    expect(gap).toBeLessThan(16_000);
    const d = await eventually(async () => {
      const r = await admin<Deliveries>(stack, 'GET', `/webhooks/${s.webhookId}/deliveries`);
      return r.body.deliveries[0]?.status === 'succeeded' ? r.body.deliveries[0] : undefined;
    });
    expect(d.attempts[0]).toMatchObject({ status_code: 0, error: expect.stringMatching(/timed out/) });
    expect(d.attempts[0]!.latency_ms).toBeGreaterThanOrEqual(9_900);
    expect(d.attempts[1]!.status_code).toBe(200);
    receiver.respond = () => ({ status: 200 });
  }, 60_000);

  it("another account's events never reach a webhook; a deleted webhook gets nothing more", async () => {
    const a = await senderWithHook('isoa', ['delivery']);
    const b = await createSender(stack, 'isob', 'isob.example');
    await send(b.key, validEmail({ from: `x@isob.example` }));
    await send(a.key, validEmail({ from: `x@${a.domain}`, subject: 'mine' }));
    const [mine] = await waitHooks(a.path, 1);
    expect(mine!.body.email!.subject).toBe('mine');
    await admin(stack, 'DELETE', `/webhooks/${a.webhookId}`);
    await send(a.key, validEmail({ from: `x@${a.domain}`, subject: 'after delete' }));
    await eventually(async () => stack.sink.messages.find((m) => m.parsed.subject === 'after delete'));
    await new Promise((r) => setTimeout(r, 1000));
    expect(receiver.on(a.path).map((h) => h.body.email!.subject)).toEqual(['mine']);
  });
});

describe('Verify', () => {
  it('sends a signed test request and answers {success: true, status_code: 200}', async () => {
    const s = await senderWithHook('verify');
    const res = await admin(stack, 'POST', `/webhooks/${s.webhookId}/verify`, {});
    expect(res.body).toEqual({ success: true, status_code: 200 });
    const [hook] = receiver.on(s.path);
    expect(hook!.headers['x-mail-event']).toBe('test');
    expect(hook!.body).toMatchObject({ event: 'test', timestamp: expect.stringMatching(ISO) });
    expect(hook!.headers['x-mail-signature']).toBe(
      independentSignature(s.secret, hook!.headers['x-mail-timestamp'] as string, hook!.rawBody),
    );
  });

  it("answers {success: false} with the receiver's status, or 0 when nothing answers", async () => {
    const s = await senderWithHook('verifyfail');
    receiver.respond = (h: ReceivedHook) => (h.path === s.path ? { status: 410 } : { status: 200 });
    expect((await admin(stack, 'POST', `/webhooks/${s.webhookId}/verify`, {})).body).toEqual({
      success: false,
      status_code: 410,
    });
    receiver.respond = () => ({ status: 200 });
    const dead = await admin<{ id: string }>(stack, 'POST', `/accounts/${s.accountId}/webhooks`, {
      url: 'http://127.0.0.1:9/nothing',
      events: ['send'],
    });
    expect((await admin(stack, 'POST', `/webhooks/${dead.body.id}/verify`, {})).body).toEqual({
      success: false,
      status_code: 0,
    });
  });
});

describe('the event timeline (management API)', () => {
  it('GET /admin/emails/:id answers the email, its account and its events in order', async () => {
    const s = await createSender(stack, 'timeline', 'timeline.example');
    const id = await send(
      s.key,
      validEmail({ from: 't@timeline.example', to: ['a@example.net', 'bounce-two@example.net'] }),
    );
    const detail = await eventually(async () => {
      const r = await admin<{
        email: { status: string };
        account_id: string;
        events: { id: string; type: string; created_at: string; data: Record<string, unknown> }[];
      }>(stack, 'GET', `/emails/${id}`);
      return r.body.events.length >= 3 ? r.body : undefined;
    });
    expect(detail.account_id).toBe(s.accountId);
    expect(detail.email.status).toBe('delivered');
    expect(detail.events.map((e) => e.type)).toEqual(['send', 'delivery', 'bounce']);
    expect(detail.events[1]!.data).toMatchObject({ recipients: ['a@example.net'] });
    expect(detail.events[2]!.data).toMatchObject({
      bounce_type: 'Permanent',
      bounced_recipients: [expect.objectContaining({ email_address: 'bounce-two@example.net', status: '5.1.1' })],
    });
    for (const e of detail.events) expect(e.created_at).toMatch(ISO);
    const missing = await call('GET', `${stack.admin}/emails/em_01hzzzzzzzzzzzzzzzzzzzzzzz`, { token: ADMIN_TOKEN });
    expect(missing.status).toBe(404);
  });
});
