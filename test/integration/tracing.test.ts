import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin } from '../helpers/admin-fixtures.js';
import { bearer, loadClients, type GrpcClient } from '../helpers/grpc-client.js';
import { call, eventually, validEmail } from '../helpers/http.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { useStack } from '../helpers/use-stack.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const SERVER = 2;
const CLIENT = 3;
const CONSUMER = 5;

let otlp: OtlpReceiver;
let hooks: WebhookReceiver;
beforeAll(async () => {
  otlp = await startOtlpReceiver();
  hooks = await startWebhookReceiver();
});
afterAll(async () => {
  await hooks.close();
  await otlp.close();
});

// Registered after the receivers' hooks, so its env function runs once they listen.
const stack = useStack(async () => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
  OTEL_SERVICE_NAME: 'mailer-under-test',
  OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test,team=mail%20ops',
  OTEL_BSP_SCHEDULE_DELAY: '100',
  MAILER_WEBHOOK_ALLOW_PRIVATE: '1',
}));

const named = (name: string, where: (s: ReceivedSpan) => boolean = () => true) =>
  otlp.spans.find((s) => s.name === name && where(s));
const span = (name: string, where?: (s: ReceivedSpan) => boolean) =>
  eventually(async () => named(name, where), 30_000, 100);
const byId = (spanId: string) => otlp.spans.find((s) => s.spanId === spanId);

describe('OpenTelemetry traces over OTLP/HTTP protobuf', () => {
  it('follows an email in one trace from the REST request to the SMTP reply, linked to its delivery workflow', async () => {
    const hook = await admin<{ id: string }>(stack, 'POST', `/accounts/${stack.accountId}/webhooks`, {
      url: `${hooks.url}/traced`,
      events: ['delivery'],
    });
    expect(hook.status).toBe(200);
    const sent = await call<{ id: string }>('POST', `${stack.api}/emails`, {
      token: stack.apiKey,
      body: validEmail({ from: 'a@example.com' }),
      headers: { 'x-request-id': 'otel-e2e-1' },
    });
    expect(sent.status).toBe(200);
    const emailId = sent.body.id;

    const request = await span('POST /v1/mail/emails', (s) => s.attributes['mailer.request_id'] === 'otel-e2e-1');
    expect(request).toMatchObject({
      kind: SERVER,
      parentSpanId: '',
      attributes: { 'http.request.method': 'POST', 'http.route': '/v1/mail/emails', 'http.response.status_code': 200 },
      resource: { 'service.name': 'mailer-under-test', 'deployment.environment.name': 'test', team: 'mail ops' },
    });
    expect(otlp.contentTypes[0]).toBe('application/x-protobuf');
    const send = await span('send email', (s) => s.traceId === request.traceId);
    expect(send).toMatchObject({ parentSpanId: request.spanId, attributes: { 'mailer.email.id': emailId } });

    // Delivery: in the request's trace, under the span the email was accepted in.
    const deliver = await span('deliver email', (s) => s.attributes['mailer.email.id'] === emailId);
    expect(deliver).toMatchObject({
      traceId: request.traceId,
      parentSpanId: send.spanId,
      kind: CONSUMER,
      attributes: { 'mailer.delivery.outcome': 'sent' },
    });
    const smtp = await span('smtp send', (s) => s.parentSpanId === deliver.spanId);
    expect(smtp).toMatchObject({
      traceId: request.traceId,
      kind: CLIENT,
      attributes: {
        'mailer.email.id': emailId,
        'server.address': '127.0.0.1',
        'mailer.smtp.reply_code': 250,
        'mailer.smtp.accepted': 1,
        'mailer.smtp.refused': 0,
        'mailer.smtp.deferred': 0,
      },
    });
    expect(smtp.attributes['mailer.smtp.reply']).toMatch(/^250\b/);

    // ...and linked to the delivery activity, whose trace is Temporal's: start, workflow, activity.
    expect(deliver.links).toHaveLength(1);
    const activity = await eventually(async () => byId(deliver.links[0]!.spanId), 30_000, 100);
    expect(activity.name).toBe('RunActivity:deliverEmails');
    const chain: string[] = [];
    for (
      let s: ReceivedSpan | undefined = activity;
      s;
      s = s.parentSpanId ? await eventually(async () => byId(s!.parentSpanId), 30_000, 100) : undefined
    ) {
      chain.push(s.name);
    }
    expect(chain).toEqual([
      'RunActivity:deliverEmails',
      'StartActivity:deliverEmails',
      'RunWorkflow:deliverEmailsWorkflow',
      'StartWorkflow:deliverEmailsWorkflow',
    ]);

    // The webhook POST of the delivery event, made by the worker's dispatcher itself (a retry would run under
    // RunActivity:sendWebhook): a root client span, linked to the email's request.
    const post = await span('webhook POST', (s) => s.attributes['mailer.email.id'] === emailId);
    expect(post).toMatchObject({
      kind: CLIENT,
      attributes: {
        'http.request.method': 'POST',
        'http.response.status_code': 200,
        'server.address': new URL(hooks.url).host,
        'mailer.webhook.attempt': 1,
      },
      links: [{ traceId: request.traceId, spanId: send.spanId }],
    });
    expect(post.parentSpanId || undefined).toBeUndefined();
    expect(hooks.on('/traced').length).toBeGreaterThan(0);
  }, 60_000);

  it("continues a caller's traceparent on REST", async () => {
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const res = await call('GET', `${stack.api}/emails?page_size=1`, {
      token: stack.apiKey,
      headers: { traceparent: `00-${traceId}-b7ad6b7169203331-01` },
    });
    expect(res.status).toBe(200);
    const request = await span('GET /v1/mail/emails', (s) => s.traceId === traceId);
    expect(request).toMatchObject({
      kind: SERVER,
      parentSpanId: 'b7ad6b7169203331',
      attributes: { 'http.response.status_code': 200 },
    });
  });

  describe('gRPC', () => {
    let client: GrpcClient;
    beforeAll(() => {
      client = loadClients(stack.grpcAddress).email;
    });
    afterAll(() => client.close());

    /** One SendEmail call, with the response's header metadata (or the error's). */
    const sendEmail = (md: grpc.Metadata, req: Record<string, unknown>) =>
      new Promise<{ id?: string; header: grpc.Metadata; code?: number }>((resolve) => {
        let header = new grpc.Metadata();
        const c = client.SendEmail!.call(client, req, md, { deadline: Date.now() + 15_000 }, (err, res) => {
          resolve(err ? { header: err.metadata, code: err.code } : { id: String(res?.id), header });
        });
        c.on('metadata', (m: grpc.Metadata) => {
          header = m;
        });
      });

    it('is a server span per RPC with its status code, the send in it, and answers the request id', async () => {
      const ok = await sendEmail(
        bearer(stack.apiKey, { 'x-request-id': 'grpc-req-1' }),
        validEmail({ from: 'a@example.com' }),
      );
      expect(ok.header.get('x-request-id')).toEqual(['grpc-req-1']);
      const rpc = await span(
        'mail.v1.EmailService/SendEmail',
        (s) => s.attributes['mailer.request_id'] === 'grpc-req-1',
      );
      expect(rpc).toMatchObject({
        kind: SERVER,
        attributes: {
          'rpc.system': 'grpc',
          'rpc.service': 'mail.v1.EmailService',
          'rpc.method': 'SendEmail',
          'rpc.grpc.status_code': 0,
        },
      });
      const send = await span('send email', (s) => s.parentSpanId === rpc.spanId);
      expect(send.attributes['mailer.email.id']).toBe(ok.id);
      await span('smtp send', (s) => s.traceId === rpc.traceId);

      // A refused call (a validation error) still answers its id, and is no error of the service's.
      const refused = await sendEmail(bearer(stack.apiKey, { 'x-request-id': 'grpc-req-2' }), {
        ...validEmail(),
        to: [],
      });
      expect(refused.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(refused.header.get('x-request-id')).toEqual(['grpc-req-2']);
      const failed = await span(
        'mail.v1.EmailService/SendEmail',
        (s) => s.attributes['mailer.request_id'] === 'grpc-req-2',
      );
      expect(failed).toMatchObject({
        statusCode: 0,
        attributes: { 'rpc.grpc.status_code': grpc.status.INVALID_ARGUMENT },
      });

      // An unacceptable id is replaced.
      const made = await sendEmail(
        bearer(stack.apiKey, { 'x-request-id': 'x'.repeat(65) }),
        validEmail({ from: 'a@example.com' }),
      );
      expect(made.header.get('x-request-id')[0]).toMatch(/^[0-9a-f-]{36}$/);
    }, 60_000);
  });
});
