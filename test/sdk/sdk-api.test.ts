import { createGrpcTransport } from '@connectrpc/connect-node';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { H2CClient, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Mailer, MailerError, Webhooks, type MailEvent } from '../../sdk/typescript/src/index.js';
import { createSender } from '../helpers/admin-fixtures.js';
import { eventually } from '../helpers/http.js';
import { standardSignatureFor } from '../../src/webhooks/standard-signature.js';
import { useStack } from '../helpers/use-stack.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * The TypeScript SDK (sdk/typescript, from its sources) against the real service, over each way it reaches it:
 * REST over fetch (its default), Connect over fetch (connect-web) to the gRPC port, and a connect-es Transport
 * the caller passes (connect-node's gRPC). Every resource gives the same proto messages on each.
 */
const stack = useStack({ MAILER_WEBHOOK_ALLOW_PRIVATE: '1' });
const DOMAIN = 'sdk-api.example';
let key = '';
let h2c: H2CClient;
let receiver: WebhookReceiver;

beforeAll(async () => {
  key = (await createSender(stack, 'sdk-api', DOMAIN)).key;
  receiver = await startWebhookReceiver();
  // The gRPC port speaks HTTP/2 only (h2c); Node's fetch speaks HTTP/1.1 unless given a dispatcher that does.
  h2c = new H2CClient(`http://${stack.grpcAddress}`);
});
afterAll(async () => {
  await h2c?.close();
  await receiver?.close();
});

const restUrl = () => stack.api.replace(/\/v1\/mail$/, '');
const grpcUrl = () => `http://${stack.grpcAddress}`;

const TRANSPORTS: Record<string, () => Mailer> = {
  rest: () => new Mailer({ apiKey: key, baseUrl: restUrl() }),
  connect: () =>
    new Mailer({
      apiKey: key,
      baseUrl: grpcUrl(),
      transport: 'connect',
      // undici's own fetch with its h2c dispatcher (Node's bundled fetch is an older undici).
      fetch: ((input: string, init: RequestInit) =>
        undiciFetch(input, { ...init, dispatcher: h2c } as never)) as unknown as typeof fetch,
    }),
  grpc: () => new Mailer({ apiKey: key, transport: createGrpcTransport({ baseUrl: grpcUrl() }) }),
};

describe.each(Object.keys(TRANSPORTS))('the SDK over %s', (name) => {
  let mailer: Mailer;
  beforeAll(() => {
    mailer = TRANSPORTS[name]!();
  });
  const from = `App <app-${name}@${DOMAIN}>`;

  it('sends, gets, lists, and reads the email events (its timeline, events.list and events.iterate)', async () => {
    const sent = await mailer.emails.send({
      from,
      to: [`ada-${name}@example.net`],
      subject: `sdk ${name}`,
      html: '<p>Hello</p>',
      tags: { via: name },
    });
    expect(sent.id).toMatch(/^em_/);
    expect(sent.status).toBe('pending');

    const email = await mailer.emails.get(sent.id);
    expect(email).toMatchObject({ id: sent.id, subject: `sdk ${name}`, to: [`ada-${name}@example.net`] });
    expect(email.tags).toEqual({ via: name });

    const page = await mailer.emails.list({ pageSize: 100 });
    expect(page.data.map((e) => e.id)).toContain(sent.id);
    expect(page.total).toBeGreaterThanOrEqual(1);

    const timeline = await eventually(async () => {
      const { events } = await mailer.emails.events(sent.id);
      return events.length === 2 && events;
    });
    expect(timeline.map((e) => e.event)).toEqual(['send', 'delivery']);
    expect(timeline[1]!.email?.id).toBe(sent.id);

    const listed = await mailer.events.list({ emailId: sent.id });
    expect(listed.events.map((e) => e.id)).toEqual(timeline.map((e) => e.id));
    expect(listed.nextCursor).not.toBe('');

    // Pages of one: the iterator follows next_cursor to the end.
    const iterated: MailEvent[] = [];
    for await (const event of mailer.events.iterate({ emailId: sent.id, limit: 1 })) iterated.push(event);
    expect(iterated.map((e) => e.id)).toEqual(timeline.map((e) => e.id));
    const deliveries: MailEvent[] = [];
    for await (const event of mailer.events.iterate({ type: 'delivery' })) deliveries.push(event);
    expect(deliveries.every((e) => e.event === 'delivery')).toBe(true);
    expect(deliveries.map((e) => e.email?.id)).toContain(sent.id);
  });

  it('schedules (then cancels) and sends a batch whose job completes', async () => {
    const at = new Date(Date.now() + 3600_000).toISOString();
    const scheduled = await mailer.emails.schedule({
      from,
      to: ['later@example.net'],
      subject: 'later',
      text: 'later',
      scheduledAt: at,
    });
    expect(scheduled.id).toBeTruthy();
    const got = await mailer.scheduled.get(scheduled.id);
    expect(got).toMatchObject({ id: scheduled.id, subject: 'later' });
    expect((await mailer.scheduled.list()).scheduledEmails.map((s) => s.id)).toContain(scheduled.id);
    expect((await mailer.scheduled.cancel(scheduled.id)).success).toBe(true);
    expect((await mailer.scheduled.get(scheduled.id)).status).toBe('cancelled');

    const batch = await mailer.emails.batch([
      { from, to: ['b1@example.net'], subject: 'b1', text: 'one' },
      { from, to: ['b2@example.net'], subject: 'b2', text: 'two' },
    ]);
    expect(batch.totalCount).toBe(2);
    const job = await eventually(async () => {
      const j = await mailer.batches.get(batch.jobId);
      return j.status === 'completed' && j;
    });
    expect(job.sentCount).toBe(2);
    expect((await mailer.batches.list()).batchJobs.map((j) => j.jobId)).toContain(batch.jobId);
  });

  it('creates, renders and sends with a template', async () => {
    const template = await mailer.templates.create({
      name: `welcome ${name}`,
      alias: `welcome-${name}`,
      subject: 'Welcome, {{name}}',
      html: '<p>Hi {{name}}</p>',
    });
    expect(template).toMatchObject({ version: 1, publishedVersion: 1, alias: `welcome-${name}` });
    const rendered = await mailer.templates.render(`welcome-${name}`, { variables: { name: 'Ada' } });
    expect(rendered.subject).toBe('Welcome, Ada');
    expect(rendered.html).toContain('Hi Ada');
    expect((await mailer.templates.list()).templates.map((t) => t.id)).toContain(template.id);

    const sent = await mailer.emails.send({
      from,
      to: ['t@example.net'],
      template: { id: template.id, variables: { name: 'Grace' } },
    });
    expect((await mailer.emails.get(sent.id)).subject).toBe('Welcome, Grace');
  });

  it('adds, lists and removes suppressions; lists, creates and deletes inbound routes', async () => {
    const address = `gone-${name}@example.net`;
    const entry = await mailer.suppressions.add({ email: address });
    expect(entry).toMatchObject({ email: address, reason: 'manual' });
    expect((await mailer.suppressions.list({ email: address })).suppressions.map((s) => s.email)).toEqual([address]);
    expect((await mailer.suppressions.remove(address)).success).toBe(true);
    expect((await mailer.suppressions.list({ email: address })).total).toBe(0);

    const route = await mailer.inbound.routes.create(`in-${name}@${DOMAIN}`);
    expect(route.match).toBe(`in-${name}@${DOMAIN}`);
    expect((await mailer.inbound.routes.list()).routes.map((r) => r.id)).toContain(route.id);
    expect((await mailer.inbound.routes.delete(route.id)).success).toBe(true);
    expect((await mailer.inbound.emails.list()).inboundEmails).toEqual([]);
  });

  it('creates a webhook whose signed test request verifies with its secret', async () => {
    const hook = await mailer.webhooks.create({ url: `${receiver.url}/${name}`, events: ['delivery'] });
    expect(hook.secret).toMatch(/^whsec_/);
    const answer = await mailer.webhooks.sendTest(hook.id);
    expect(answer).toMatchObject({ success: true, statusCode: 200 });
    // The hook is subscribed to deliveries, so one of an email sent earlier in this file may come first.
    const request = receiver.on(`/${name}`).find((h) => h.body.event === 'test');
    const event = await Webhooks.verify(request!.rawBody, request!.headers, hook.secret!);
    expect(event.event).toBe('test');
    expect((await mailer.webhooks.list()).webhooks.map((w) => w.id)).toContain(hook.id);
    await mailer.webhooks.delete(hook.id);
  });

  it("surfaces the service's refusals as MailerError with the spec's error and message", async () => {
    const invalid = await mailer.emails.send({ from, to: ['x@example.net'], subject: 'no body' }).catch((e) => e);
    expect(invalid).toBeInstanceOf(MailerError);
    expect(invalid).toMatchObject({ error: 'validation error', status: 400 });
    expect(invalid.message).toMatch(/html or text/);
    expect(invalid.requestId).toMatch(/./);

    const missing = await mailer.emails.get('em_01jbnotanemail000000000000').catch((e) => e);
    expect(missing).toMatchObject({ name: 'MailerError', error: 'not found', status: 404 });

    const unauthorized = await new Mailer({ apiKey: 'mk_wrong', baseUrl: restUrl() }).emails.list().catch((e) => e);
    expect(unauthorized).toMatchObject({ error: 'unauthorized', status: 401 });
  });
});

describe('events.iterate with follow', () => {
  it('keeps polling for new events until the signal aborts, then ends quietly', async () => {
    const mailer = TRANSPORTS.rest!();
    const sent = await mailer.emails.send({ from: `f@${DOMAIN}`, to: ['f@example.net'], subject: 'follow', text: 'x' });
    // Right after the send its events are not written yet: only following waits for them.
    const controller = new AbortController();
    const seen: string[] = [];
    const follow = { follow: true, pollIntervalMs: 50, signal: controller.signal };
    for await (const event of mailer.events.iterate({ emailId: sent.id }, follow)) {
      seen.push(event.event);
      if (seen.length === 2) controller.abort();
    }
    expect(seen).toEqual(['send', 'delivery']);
  });
});

describe('Webhooks.verify', () => {
  it('accepts a delivery webhook the service sent, and refuses it tampered, too old, or under another secret', async () => {
    const mailer = TRANSPORTS.rest!();
    const hook = await mailer.webhooks.create({ url: `${receiver.url}/deliveries`, events: ['delivery'] });
    const secret = hook.secret!;
    const sent = await mailer.emails.send({ from: `v@${DOMAIN}`, to: ['v@example.net'], subject: 'hook', text: 'x' });
    const request = await eventually(async () => receiver.on('/deliveries').find((h) => h.body.email?.id === sent.id));
    const event = await Webhooks.verify(request.rawBody, request.headers, secret);
    expect(event).toMatchObject({ event: 'delivery', email: { id: sent.id, subject: 'hook' } });
    expect(event.id).toMatch(/^evt_/);
    // A fetch Headers and the body's bytes do as well as Node's header object and a string.
    const headers = new Headers(Object.entries(request.headers).map(([k, v]) => [k, String(v)]));
    expect((await Webhooks.verify(new TextEncoder().encode(request.rawBody), headers, secret)).id).toBe(event.id);

    const refusal = (p: Promise<unknown>) =>
      p.then(
        () => 'accepted',
        (e: Error) => `${e.name}: ${e.message}`,
      );
    const tampered = request.rawBody.replace('"hook"', '"hooK"');
    expect(tampered).not.toBe(request.rawBody);
    expect(await refusal(Webhooks.verify(tampered, request.headers, secret))).toMatch(
      /^WebhookVerificationError: no signature/,
    );
    const other = (await mailer.webhooks.create({ url: `${receiver.url}/other`, events: ['delivery'] })).secret!;
    expect(await refusal(Webhooks.verify(request.rawBody, request.headers, other))).toMatch(/no signature/);
    const { 'webhook-signature': _, ...unsigned } = request.headers;
    expect(await refusal(Webhooks.verify(request.rawBody, unsigned, secret))).toMatch(/missing/);

    // Signed right (as the service signs) but six minutes ago: a replay.
    const id = String(request.headers['webhook-id']);
    const signedAt = (at: number) => ({
      'webhook-id': id,
      'webhook-timestamp': String(at),
      'webhook-signature': standardSignatureFor(secret, id, at, request.rawBody),
    });
    const now = Math.floor(Date.now() / 1000);
    expect(await refusal(Webhooks.verify(request.rawBody, signedAt(now - 360), secret))).toMatch(
      /webhook-timestamp is more than 300 s from now/,
    );
    expect(await refusal(Webhooks.verify(request.rawBody, signedAt(now - 10), secret))).toBe('accepted');
  });

  it('accepts what the standardwebhooks library signs, and secrets written in base64url (made before rotation)', async () => {
    const body = JSON.stringify({ event: 'send', timestamp: new Date().toISOString(), data: {} });
    const secret = `whsec_${Buffer.from('k'.repeat(16) + '\u00fb\u00ff' + 'k'.repeat(14), 'latin1').toString('base64')}`;
    const at = new Date();
    const signature = new StandardWebhook(secret).sign('msg_1', at, body);
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signature,
    };
    expect((await Webhooks.verify(body, headers, secret)).event).toBe('send');

    const legacy = `whsec_${Buffer.from('k'.repeat(16) + '\u00fb\u00ff' + 'k'.repeat(14), 'latin1').toString('base64url')}`;
    expect(legacy).toMatch(/[-_]/);
    const ts = headers['webhook-timestamp'];
    const legacyHeaders = { ...headers, 'webhook-signature': standardSignatureFor(legacy, 'msg_1', ts, body) };
    expect((await Webhooks.verify(body, legacyHeaders, legacy)).event).toBe('send');
  });
});
