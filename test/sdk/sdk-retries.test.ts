import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { toJsonString } from '@bufbuild/protobuf';
import { afterEach, describe, expect, it } from 'vitest';
import { Mailer, MailerError, SendEmailResponseSchema } from '../../sdk/typescript/src/index.js';

/**
 * The SDK's retries against a local HTTP server that answers what each test scripts (503 then 200, 429 with
 * Retry-After, ...), over REST and over Connect (connect-web's fetch transport, in its JSON form, which needs no
 * HTTP/2 from a test server): which failures are retried, how long it waits, and that every attempt of a send
 * carries the same Idempotency-Key.
 */

interface Seen {
  path: string;
  headers: http.IncomingHttpHeaders;
  at: number;
}
type Answer = { status: number; headers?: Record<string, string>; body?: string } | 'drop';

let server: http.Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  server = undefined;
});

/** A server answering its nth request with answers[n] (the last one again when they run out). */
async function scripted(answers: Answer[]): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push({ path: req.url ?? '', headers: req.headers, at: performance.now() });
      const answer = answers[Math.min(seen.length - 1, answers.length - 1)]!;
      if (answer === 'drop') return req.socket.destroy();
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers }).end(answer.body ?? '');
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, seen };
}

const SENT = JSON.stringify({ id: 'em_1', message_id: '', status: 'pending' });
const ok = (body = SENT): Answer => ({ status: 200, body });
const refusal = (status: number, error: string, message: string, headers: Record<string, string> = {}): Answer => ({
  status,
  headers: { 'x-request-id': `req-${status}`, ...headers },
  body: JSON.stringify({ error, message }),
});
const email = { from: 'a@sdk.example', to: ['b@example.net'], subject: 's', text: 't' };
const gaps = (seen: Seen[]) => seen.slice(1).map((s, i) => s.at - seen[i]!.at);
const rest = (url: string, retry = {}) => new Mailer({ apiKey: 'mk_test', baseUrl: url, retry });

describe('SDK retries over REST', () => {
  it('retries a 503 after a jittered backoff, sending the same Idempotency-Key on each attempt', async () => {
    const { url, seen } = await scripted([refusal(503, 'service unavailable', 'down'), ok()]);
    const sent = await rest(url).emails.send(email);
    expect(sent.id).toBe('em_1');
    expect(seen.map((s) => s.path)).toEqual(['/v1/mail/emails', '/v1/mail/emails']);
    const key = seen[0]!.headers['idempotency-key'];
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen[1]!.headers['idempotency-key']).toBe(key);
    expect(seen[0]!.headers.authorization).toBe('Bearer mk_test');
    // The first backoff step is 500 ms, of which a random half is waited: 250..500 ms.
    expect(gaps(seen)[0]).toBeGreaterThanOrEqual(240);
    expect(gaps(seen)[0]).toBeLessThan(1500);

    // Another call, another key; the caller's own is used as given.
    const again = await scripted([ok()]);
    await rest(again.url).emails.send(email, { idempotencyKey: 'order-42' });
    expect(again.seen[0]!.headers['idempotency-key']).toBe('order-42');
  });

  it('waits what Retry-After asks, in seconds or as an HTTP date', async () => {
    const seconds = await scripted([refusal(429, 'too many requests', 'slow down', { 'retry-after': '1' }), ok()]);
    await rest(seconds.url).emails.send(email);
    expect(seconds.seen).toHaveLength(2);
    expect(gaps(seconds.seen)[0]).toBeGreaterThanOrEqual(980);
    expect(seconds.seen[1]!.headers['idempotency-key']).toBe(seconds.seen[0]!.headers['idempotency-key']);

    const date = new Date(Date.now() + 2000).toUTCString();
    const dated = await scripted([refusal(429, 'too many requests', 'slow down', { 'retry-after': date }), ok()]);
    await rest(dated.url).emails.send(email);
    expect(dated.seen).toHaveLength(2);
    // The date has whole seconds: 1 to 2 s from when it was written.
    expect(gaps(dated.seen)[0]).toBeGreaterThanOrEqual(900);
  });

  it('retries a dropped connection, and gives up after maxRetries with the last refusal as MailerError', async () => {
    const dropped = await scripted(['drop', ok()]);
    expect((await rest(dropped.url, { initialDelayMs: 20 }).emails.send(email)).id).toBe('em_1');
    expect(dropped.seen[1]!.headers['idempotency-key']).toBe(dropped.seen[0]!.headers['idempotency-key']);

    const down = await scripted([refusal(503, 'service unavailable', 'the database cannot be reached')]);
    const err = await rest(down.url, { initialDelayMs: 20 })
      .emails.list()
      .catch((e: unknown) => e);
    expect(down.seen).toHaveLength(3);
    expect(err).toBeInstanceOf(MailerError);
    expect(err).toMatchObject({
      error: 'service unavailable',
      message: 'the database cannot be reached',
      status: 503,
      requestId: 'req-503',
    });
  });

  it('does not retry a 4xx, a Retry-After beyond the limit, or a create without a key after a 500', async () => {
    const invalid = await scripted([refusal(400, 'validation error', 'subject is required')]);
    const err = await rest(invalid.url)
      .emails.send(email)
      .catch((e: unknown) => e);
    expect(invalid.seen).toHaveLength(1);
    expect(err).toMatchObject({ error: 'validation error', message: 'subject is required', status: 400 });

    const later = await scripted([refusal(429, 'daily quota exceeded', 'quota', { 'retry-after': '3600' })]);
    expect(
      await rest(later.url)
        .emails.send(email)
        .catch((e: unknown) => e),
    ).toMatchObject({ status: 429, retryAfterMs: 3_600_000 });
    expect(later.seen).toHaveLength(1);

    // A template create has no Idempotency-Key: a 500 may have come after it was made, so it is not sent twice...
    const failed = await scripted([refusal(500, 'internal server error', 'boom'), ok('{}')]);
    expect(
      await rest(failed.url, { initialDelayMs: 20 })
        .templates.create({ name: 'n', subject: 's', text: 't' })
        .catch((e: unknown) => e),
    ).toMatchObject({ status: 500 });
    expect(failed.seen).toHaveLength(1);
    expect(failed.seen[0]!.headers['idempotency-key']).toBeUndefined();
    // ...but a 503, refused before anything was done, is.
    const refused = await scripted([refusal(503, 'service unavailable', 'down'), ok('{"id":"tpl_1"}')]);
    const made = await rest(refused.url, { initialDelayMs: 20 }).templates.create({
      name: 'n',
      subject: 's',
      text: 't',
    });
    expect(made.id).toBe('tpl_1');
    expect(refused.seen).toHaveLength(2);
  });
});

describe('SDK retries over Connect', () => {
  const connect = (url: string) => new Mailer({ apiKey: 'mk_test', baseUrl: url, transport: 'connect' });
  const connectError = (status: number, code: string, mailError: string, headers: Record<string, string> = {}) => ({
    status,
    headers: { 'mail-error': mailError, 'x-request-id': 'req-c', ...headers },
    body: JSON.stringify({ code, message: `${mailError}!` }),
  });
  const sent = ok(
    toJsonString(SendEmailResponseSchema, {
      $typeName: 'mail.v1.SendEmailResponse',
      id: 'em_2',
      messageId: '',
      status: 'pending',
    }),
  );

  it('retries unavailable and resource_exhausted (honouring retry-after) with the same Idempotency-Key', async () => {
    const { url, seen } = await scripted([
      connectError(503, 'unavailable', 'service unavailable'),
      connectError(429, 'resource_exhausted', 'too many requests', { 'retry-after': '1' }),
      sent,
    ]);
    const answer = await connect(url).emails.send(email);
    expect(answer.id).toBe('em_2');
    expect(seen.map((s) => s.path)).toEqual(Array(3).fill('/mail.v1.EmailService/SendEmail'));
    const key = seen[0]!.headers['idempotency-key'];
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen.map((s) => s.headers['idempotency-key'])).toEqual([key, key, key]);
    expect(gaps(seen)[1]).toBeGreaterThanOrEqual(980);
  });

  it("reads the spec's error from mail-error: payload too large is 413 and not retried", async () => {
    const { url, seen } = await scripted([connectError(429, 'resource_exhausted', 'payload too large')]);
    const err = await connect(url)
      .emails.send(email)
      .catch((e: unknown) => e);
    expect(seen).toHaveLength(1);
    expect(err).toMatchObject({
      name: 'MailerError',
      error: 'payload too large',
      message: 'payload too large!',
      status: 413,
      requestId: 'req-c',
    });
  });
});
