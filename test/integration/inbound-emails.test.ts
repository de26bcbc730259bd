import crypto from 'node:crypto';
import type * as grpc from '@grpc/grpc-js';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, createKey, createSender } from '../helpers/admin-fixtures.js';
import { insertEmail } from '../helpers/backdated-rows.js';
import { bearer, expectSameError, failed, ok, rpc, useGrpcClients, type Obj } from '../helpers/grpc-client.js';
import { call, eventually } from '../helpers/http.js';
import { insertInbound } from '../helpers/inbound-rows.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { useStack } from '../helpers/use-stack.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { newId } from '../../src/ids.js';
import { createSql, type Sql } from '../../src/db/sql.js';

/**
 * Reading inbound mail back (issue 26, CONTRACT.md "Inbound mail") against the real service: the list and one
 * message, the raw bytes exactly as stored, attachments served as safe downloads, 404s and isolation between
 * accounts, permissions, the same over gRPC and the management API; and events without an email: an `inbound`
 * event delivered to a real webhook receiver (signed, retried), in the events API, in the deliveries list; a
 * `reply` event on the email it answers. Inbound rows are written as the receive pipeline stores them.
 */
const stack = useStack({ MAILER_WEBHOOK_ALLOW_PRIVATE: '1' });
const clients = useGrpcClients(stack);
let receiver: WebhookReceiver;
let sql: Sql;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  sql = createSql(stack.databaseUrl, { max: 2 });
});
afterAll(async () => {
  await receiver?.close();
  await sql?.end();
});

/** A message with 8-bit bytes, CRLF and bare LF, long enough to span several stored chunks. */
const rawMessage = (subject: string) =>
  Buffer.concat([
    Buffer.from(
      `From: Stranger <stranger@elsewhere.example>\r\nTo: support@inbound.example\r\nSubject: ${subject}\r\n`,
    ),
    Buffer.from('Content-Type: text/plain; charset=latin1\r\nContent-Transfer-Encoding: 8bit\r\n\r\n'),
    Buffer.from([0xe9, 0xe8, 0x0a, 0x0d, 0x0a, 0xff, 0x00, 0x80]),
    crypto.randomBytes(5000),
    Buffer.from('\r\n'),
  ]);

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), crypto.randomBytes(3000)]);
const HTML = Buffer.from('<html><script>alert(document.cookie)</script></html>');

async function bytes(url: string, token: string): Promise<{ status: number; headers: Headers; body: Buffer }> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

/** An account with inbound mail: an older plain message and a newer one with two attachments. */
async function mailbox(name: string) {
  const s = await createSender(stack, name, `${name}.example`);
  const plainRaw = rawMessage('plain');
  const plain = await insertInbound(sql, {
    accountId: s.accountId,
    raw: plainRaw,
    subject: 'plain',
    receivedAt: new Date(Date.now() - 60_000),
    chunkBytes: 1000,
  });
  const withFilesRaw = rawMessage('files');
  const withFiles = await insertInbound(sql, {
    accountId: s.accountId,
    raw: withFilesRaw,
    subject: 'files',
    html: '<p>hi</p>',
    chunkBytes: 1000,
    attachments: [
      { filename: 'photo é.png', contentType: 'image/png', contentId: 'img1@x', bytes: PNG },
      { filename: '../../evil"\r\nX-Injected: 1.html', contentType: 'text/html; charset=utf-8', bytes: HTML },
    ],
  });
  return { ...s, plain, plainRaw, withFiles, withFilesRaw };
}

describe('GET /inbound/emails and /inbound/emails/:id', () => {
  it('lists newest first with a total and pages, and shows one message as its inbound event carries it', async () => {
    const m = await mailbox('inbound-list');
    const list = await call<{ inbound_emails: Record<string, unknown>[]; total: number }>(
      'GET',
      `${stack.api}/inbound/emails`,
      { token: m.key },
    );
    expect(list.status, list.text).toBe(200);
    expect(list.body.total).toBe(2);
    expect(list.body.inbound_emails.map((e) => e.id)).toEqual([m.withFiles.id, m.plain.id]);
    const second = await call<{ inbound_emails: { id: string }[]; total: number }>(
      'GET',
      `${stack.api}/inbound/emails?page=2&page_size=1`,
      { token: m.key },
    );
    expect(second.body).toEqual({ inbound_emails: [expect.objectContaining({ id: m.plain.id })], total: 2 });

    const one = await call('GET', `${stack.api}/inbound/emails/${m.withFiles.id}`, { token: m.key });
    expect(one.status, one.text).toBe(200);
    // The API's JSON and the event's data are the same object, sizes as numbers in both.
    expect(one.body).toEqual(m.withFiles.data);
    expect(one.body).toMatchObject({
      subject: 'files',
      attachments: [
        { filename: 'photo é.png', content_type: 'image/png', content_id: 'img1@x' },
        { content_type: 'text/html; charset=utf-8', content_id: null },
      ],
      reply_to_email_id: null,
    });
  });

  it("another account's message is a 404 like a missing one; a send_only key is refused; a read_only key reads", async () => {
    const m = await mailbox('inbound-iso');
    const other = await createSender(stack, 'inbound-iso-other', 'inbound-iso-other.example');
    for (const path of [
      `/inbound/emails/${m.plain.id}`,
      `/inbound/emails/${m.plain.id}/raw`,
      `/inbound/emails/${m.withFiles.id}/attachments/0`,
    ]) {
      const res = await call('GET', `${stack.api}${path}`, { token: other.key });
      expect(res.status, path).toBe(404);
      expect(res.body).toMatchObject({ error: 'not found' });
      expect(res.headers.get('content-disposition'), path).toBeNull();
    }
    const missing = await call('GET', `${stack.api}/inbound/emails/in_nothing`, { token: m.key });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: 'not found', message: 'inbound email in_nothing not found' });
    expect((await call('GET', `${stack.api}/inbound/emails`, { token: other.key })).body).toEqual({
      inbound_emails: [],
      total: 0,
    });

    const sendOnly = await createKey(stack, m.accountId, 'send_only');
    for (const path of ['/inbound/emails', `/inbound/emails/${m.plain.id}`, `/inbound/emails/${m.plain.id}/raw`]) {
      const res = await call('GET', `${stack.api}${path}`, { token: sendOnly.key });
      expect(res.status, path).toBe(403);
      expect(res.body).toEqual({
        error: 'permission denied',
        message: 'This API key (send_only) does not have permission to read inbound mail',
      });
    }
    const readOnly = await createKey(stack, m.accountId, 'read_only');
    expect((await call('GET', `${stack.api}/inbound/emails`, { token: readOnly.key })).status).toBe(200);
    expect((await bytes(`${stack.api}/inbound/emails/${m.plain.id}/raw`, readOnly.key)).body).toEqual(m.plainRaw);
  });
});

describe('GET /inbound/emails/:id/raw and /attachments/:n', () => {
  it('answers the raw message byte for byte as message/rfc822, a download never sniffed', async () => {
    const m = await mailbox('inbound-raw');
    const res = await bytes(`${stack.api}/inbound/emails/${m.plain.id}/raw`, m.key);
    expect(res.status).toBe(200);
    expect(res.body.equals(m.plainRaw)).toBe(true);
    expect(res.headers.get('content-type')).toBe('message/rfc822');
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename="${m.plain.id}.eml"; filename*=UTF-8''${m.plain.id}.eml`,
    );
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    expect(res.headers.get('ratelimit-limit')).not.toBeNull();
  });

  it('answers each attachment with its type and a safe name; HTML is never served as a page; n out of range is a 404', async () => {
    const m = await mailbox('inbound-att');
    const png = await bytes(`${stack.api}/inbound/emails/${m.withFiles.id}/attachments/0`, m.key);
    expect(png.status).toBe(200);
    expect(png.body.equals(PNG)).toBe(true);
    expect(png.headers.get('content-type')).toBe('image/png');
    expect(png.headers.get('content-disposition')).toBe(
      `attachment; filename="photo _.png"; filename*=UTF-8''photo%20%C3%A9.png`,
    );
    expect(png.headers.get('x-content-type-options')).toBe('nosniff');

    const html = await bytes(`${stack.api}/inbound/emails/${m.withFiles.id}/attachments/1`, m.key);
    expect(html.status).toBe(200);
    expect(html.body.equals(HTML)).toBe(true);
    expect(html.headers.get('content-type')).toBe('application/octet-stream');
    expect(html.headers.get('x-injected')).toBeNull();
    const disposition = html.headers.get('content-disposition')!;
    // The path, the quote, the line break and the colon are gone: one header, one name, no directory.
    expect(disposition).toBe(`attachment; filename="evilX-Injected 1.html"; filename*=UTF-8''evilX-Injected%201.html`);
    expect(disposition).not.toMatch(/[\r\n/\\]/);

    const beyond = await call('GET', `${stack.api}/inbound/emails/${m.withFiles.id}/attachments/2`, { token: m.key });
    expect(beyond.status).toBe(404);
    expect(beyond.body).toEqual({
      error: 'not found',
      message: `inbound email ${m.withFiles.id} has no attachment 2 (its attachments are 0 to 1)`,
    });
    const none = await call('GET', `${stack.api}/inbound/emails/${m.plain.id}/attachments/0`, { token: m.key });
    expect(none.status).toBe(404);
    for (const n of ['-1', 'x', '1.5']) {
      const bad = await call('GET', `${stack.api}/inbound/emails/${m.withFiles.id}/attachments/${n}`, { token: m.key });
      expect(bad.status, n).toBe(400);
      expect(bad.body).toMatchObject({ error: 'validation error' });
    }
  });
});

type Chunk = { content_type: string; filename: string; data: string };

/** A server-streaming call's messages, or its error. */
function streamed(
  client: grpc.Client,
  method: string,
  req: Obj,
  md: grpc.Metadata,
): Promise<{ ok: true; chunks: Chunk[] } | { ok: false; error: grpc.ServiceError }> {
  const fn = (client as unknown as Record<string, (r: Obj, m: grpc.Metadata) => grpc.ClientReadableStream<Chunk>>)[
    method
  ]!;
  return new Promise((resolve) => {
    const chunks: Chunk[] = [];
    const call = fn.call(client, req, md);
    call.on('data', (c: Chunk) => chunks.push(c));
    call.on('error', (error: grpc.ServiceError) => resolve({ ok: false, error }));
    call.on('end', () => resolve({ ok: true, chunks }));
  });
}

const joined = (chunks: Chunk[]) => Buffer.concat(chunks.map((c) => Buffer.from(c.data, 'base64')));

describe('over gRPC and the management API', () => {
  it('the same reads over gRPC: list, get, the raw message and attachments streamed in chunks; the same errors as REST', async () => {
    const m = await mailbox('inbound-grpc');
    const key = bearer(m.key);
    const list = ok(await rpc(clients.email, 'ListInboundEmails', {}, key));
    expect(list.total).toBe(2);
    expect((list.inbound_emails as Obj[]).map((e) => e.id)).toEqual([m.withFiles.id, m.plain.id]);
    const one = ok(await rpc(clients.email, 'GetInboundEmail', { id: m.withFiles.id }, key));
    expect(one).toMatchObject({ id: m.withFiles.id, subject: 'files', authentication: { spf: 'pass' } });

    const raw = await streamed(clients.email, 'GetInboundRaw', { id: m.plain.id }, key);
    if (!raw.ok) throw new Error(raw.error.details);
    expect(raw.chunks.length).toBeGreaterThan(1);
    expect(raw.chunks[0]).toMatchObject({ content_type: 'message/rfc822', filename: `${m.plain.id}.eml` });
    expect(raw.chunks.slice(1).every((c) => c.content_type === '' && c.filename === '')).toBe(true);
    expect(joined(raw.chunks).equals(m.plainRaw)).toBe(true);

    const html = await streamed(clients.email, 'GetInboundAttachment', { id: m.withFiles.id, n: 1 }, key);
    if (!html.ok) throw new Error(html.error.details);
    // gRPC carries what the message declared; only REST answers a browser, so only REST makes it safe.
    expect(html.chunks[0]).toMatchObject({ content_type: 'text/html; charset=utf-8' });
    expect(joined(html.chunks).equals(HTML)).toBe(true);

    const restMissing = await call('GET', `${stack.api}/inbound/emails/${m.withFiles.id}/attachments/5`, {
      token: m.key,
    });
    const missing = await streamed(clients.email, 'GetInboundAttachment', { id: m.withFiles.id, n: 5 }, key);
    if (missing.ok) throw new Error('expected NOT_FOUND');
    expectSameError(missing.error, 5 /* NOT_FOUND */, restMissing.body as { error: string; message: string });
    const other = await createSender(stack, 'inbound-grpc-other', 'inbound-grpc-other.example');
    const foreign = await streamed(clients.email, 'GetInboundRaw', { id: m.plain.id }, bearer(other.key));
    expect(foreign.ok ? 0 : foreign.error.code).toBe(5);
    const sendOnly = await createKey(stack, m.accountId, 'send_only');
    expect(failed(await rpc(clients.email, 'ListInboundEmails', {}, bearer(sendOnly.key))).code).toBe(7);
    const denied = await streamed(clients.email, 'GetInboundRaw', { id: m.plain.id }, bearer(sendOnly.key));
    expect(denied.ok ? 0 : denied.error.code).toBe(7);
  });

  it('the management API reads any account inbound mail, REST and gRPC; an unknown account or message is a 404', async () => {
    const m = await mailbox('inbound-admin');
    const list = await admin<{ inbound_emails: { id: string }[]; total: number }>(
      stack,
      'GET',
      `/accounts/${m.accountId}/inbound/emails?page_size=1`,
    );
    expect(list.body.total).toBe(2);
    expect(list.body.inbound_emails.map((e) => e.id)).toEqual([m.withFiles.id]);
    const one = await admin(stack, 'GET', `/inbound/emails/${m.plain.id}`);
    expect(one.body).toMatchObject({ id: m.plain.id, subject: 'plain' });
    const raw = await bytes(`${stack.admin}/inbound/emails/${m.plain.id}/raw`, ADMIN_TOKEN);
    expect(raw.status).toBe(200);
    expect(raw.body.equals(m.plainRaw)).toBe(true);
    expect(raw.headers.get('content-type')).toBe('message/rfc822');
    const att = await bytes(`${stack.admin}/inbound/emails/${m.withFiles.id}/attachments/1`, ADMIN_TOKEN);
    expect(att.headers.get('content-type')).toBe('application/octet-stream');
    expect(att.body.equals(HTML)).toBe(true);
    await admin(stack, 'GET', '/accounts/acc_nothing/inbound/emails', undefined, 404);
    await admin(stack, 'GET', '/inbound/emails/in_nothing', undefined, 404);
    expect((await bytes(`${stack.admin}/inbound/emails/in_nothing/raw`, ADMIN_TOKEN)).status).toBe(404);
    expect((await bytes(`${stack.admin}/inbound/emails/${m.plain.id}/raw`, 'wrong')).status).toBe(401);

    const md = bearer(ADMIN_TOKEN);
    const grpcList = ok(await rpc(clients.admin, 'ListAccountInboundEmails', { account_id: m.accountId }, md));
    expect(grpcList.total).toBe(2);
    const grpcRaw = await streamed(clients.admin, 'GetAccountInboundRaw', { id: m.withFiles.id }, md);
    if (!grpcRaw.ok) throw new Error(grpcRaw.error.details);
    expect(joined(grpcRaw.chunks).equals(m.withFilesRaw)).toBe(true);
    const grpcAtt = await streamed(clients.admin, 'GetAccountInboundAttachment', { id: m.withFiles.id, n: 0 }, md);
    if (!grpcAtt.ok) throw new Error(grpcAtt.error.details);
    expect(grpcAtt.chunks[0]).toMatchObject({ content_type: 'image/png', filename: 'photo é.png' });
    expect(joined(grpcAtt.chunks).equals(PNG)).toBe(true);
  });
});

type FeedEvent = { id: string; event: string; timestamp: string; email?: Record<string, unknown>; data: Obj };

describe('events without an email', () => {
  it('an inbound event reaches its webhook signed, without `email`, retried after a failure, and reads the same in GET /events', async () => {
    const s = await createSender(stack, 'inbound-hook', 'inbound-hook.example');
    const hook = await admin<{ id: string; secret: string }>(stack, 'POST', `/accounts/${s.accountId}/webhooks`, {
      url: `${receiver.url}/inbound-hook`,
      events: ['inbound'],
    });
    // The first attempt fails: the retry schedule (1 s, 2 s, 4 s) applies to inbound events as to any.
    const respond = receiver.respond;
    receiver.respond = (h, nth) => (h.path === '/inbound-hook' && nth === 1 ? { status: 500 } : respond(h, nth));
    const inbound = await insertInbound(sql, { accountId: s.accountId, raw: rawMessage('hooked'), subject: 'hooked' });
    const hooks = await eventually(async () =>
      receiver.on('/inbound-hook').length >= 2 ? receiver.on('/inbound-hook') : undefined,
    );
    receiver.respond = respond;
    const [first, second] = hooks;
    expect(first!.rawBody).toBe(second!.rawBody);
    expect(second!.arrivedAt - first!.arrivedAt).toBeGreaterThanOrEqual(900);
    const body = JSON.parse(second!.rawBody) as FeedEvent;
    expect(Object.keys(body).sort()).toEqual(['data', 'event', 'id', 'timestamp']);
    expect(body).toEqual({
      id: inbound.eventId,
      event: 'inbound',
      timestamp: expect.any(String),
      data: inbound.data,
    });
    expect(new Webhook(hook.body.secret).verify(second!.rawBody, second!.headers as Record<string, string>)).toEqual(
      body,
    );

    const feed = await call<{ events: FeedEvent[] }>('GET', `${stack.api}/events?type=inbound`, { token: s.key });
    expect(feed.status, feed.text).toBe(200);
    expect(feed.body.events).toEqual([body]);
    const all = await call<{ events: FeedEvent[] }>('GET', `${stack.api}/events`, { token: s.key });
    expect(all.body.events).toEqual([body]);
    // The event carries the message: a key that may not read inbound mail does not read it in the feed either.
    const sendOnly = await createKey(stack, s.accountId, 'send_only');
    const withoutInbound = await call<{ events: FeedEvent[] }>('GET', `${stack.api}/events`, { token: sendOnly.key });
    expect(withoutInbound.status).toBe(200);
    expect(withoutInbound.body.events).toEqual([]);
    const refused = await call('GET', `${stack.api}/events?type=inbound`, { token: sendOnly.key });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({
      error: 'permission denied',
      message: 'This API key (send_only) does not have permission to read inbound mail',
    });

    const deliveries = await admin<{ deliveries: Obj[] }>(stack, 'GET', `/webhooks/${hook.body.id}/deliveries`);
    expect(deliveries.body.deliveries).toEqual([
      expect.objectContaining({
        event_id: inbound.eventId,
        event_type: 'inbound',
        inbound_id: inbound.id,
        status: 'succeeded',
      }),
    ]);
    // About no email we sent: no email_id, rather than an empty one.
    expect(deliveries.body.deliveries[0]).not.toHaveProperty('email_id');
    expect((deliveries.body.deliveries[0]!.attempts as Obj[]).map((a) => a.status_code)).toEqual([500, 200]);
  });

  it("a reply event is an event of the email it answers: in the events API with the email, and in the email's timeline", async () => {
    const s = await createSender(stack, 'inbound-reply', 'inbound-reply.example');
    const emailId = newId('email');
    await insertEmail(sql, { id: emailId, accountId: s.accountId });
    const inbound = await insertInbound(sql, {
      accountId: s.accountId,
      raw: rawMessage('Re: hello'),
      replyToEmailId: emailId,
    });
    const replies = await call<{ events: FeedEvent[] }>('GET', `${stack.api}/events?type=reply`, { token: s.key });
    expect(replies.body.events).toEqual([
      {
        id: expect.any(String),
        event: 'reply',
        timestamp: expect.any(String),
        email: expect.objectContaining({ id: emailId }),
        data: { inbound_id: inbound.id, from: 'stranger@elsewhere.example' },
      },
    ]);
    const one = await call('GET', `${stack.api}/inbound/emails/${inbound.id}`, { token: s.key });
    expect(one.body.reply_to_email_id).toBe(emailId);
    const detail = await admin<{ events: { type: string; data: Obj }[] }>(stack, 'GET', `/emails/${emailId}`);
    expect(detail.body.events).toEqual([
      expect.objectContaining({ type: 'reply', data: { inbound_id: inbound.id, from: 'stranger@elsewhere.example' } }),
    ]);
    // Inbound mail is no sent mail: the account's counts of the day show none of it.
    const stats = await admin<{ days: Record<string, number>[] }>(stack, 'GET', `/accounts/${s.accountId}/stats`);
    const today = stats.body.days.at(-1)!;
    expect(today).toMatchObject({ sent: 0, delivered: 0, bounced: 0, complained: 0 });
  });
});
