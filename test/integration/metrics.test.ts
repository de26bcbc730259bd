import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmailService } from '../../src/gen/mail/v1/email_service_pb.js';
import { admin } from '../helpers/admin-fixtures.js';
import { bearer, failed, ok, rpc, useGrpcClients } from '../helpers/grpc-client.js';
import { call, eventually, validEmail } from '../helpers/http.js';
import { parseExposition, scrape, type Scrape } from '../helpers/prometheus.js';
import { buildArf, buildDsn, headerBlock } from '../helpers/report-builders.js';
import { mailReport } from '../helpers/reports.js';
import { useStack } from '../helpers/use-stack.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { checkDashboard } from '../helpers/grafana-dashboard.js';

/**
 * /metrics of a whole stack (role all) before and after real traffic: emails sent and refused by a real SMTP
 * server, a complaint and a bounce report mailed to the report listener, webhooks to a real receiver (one
 * that fails once, one that always fails), a scheduled email, REST, gRPC and Connect calls. Each metric
 * must have moved by what that traffic did.
 */
// One retry a second after a temporary failure, so that an email deferred for good bounces within seconds.
const stack = useStack({
  MAILER_WEBHOOK_ALLOW_PRIVATE: '1',
  MAILER_SMTP_RETRY_ATTEMPTS: '1',
  MAILER_SMTP_RETRY_FIRST_SECONDS: '1',
});
const clients = useGrpcClients(stack);
let receiver: WebhookReceiver;
let before: Scrape;
let after: Scrape;
const delta = (name: string, labels?: Record<string, string>) => after.sum(name, labels) - before.sum(name, labels);

beforeAll(async () => {
  stack.sink.refuseRecipient = (a) => {
    if (a.startsWith('bounce')) return `550 5.1.1 <${a}>: Recipient address rejected: User unknown`;
    return a.startsWith('full') ? '452 4.2.2 <full>: Mailbox full, try again later' : undefined;
  };
  receiver = await startWebhookReceiver();
  // /flaky fails its first request (retried a second later), /down every one (discarded after four attempts).
  receiver.respond = (hook, nth) => ({ status: hook.path === '/down' || nth === 1 ? 503 : 200 });
  before = await scrape(stack.mailer.restUrl!);
  await traffic();
  after = await scrape(stack.mailer.restUrl!);
}, 120_000);
afterAll(async () => {
  await receiver?.close();
});

const statusOf = async (id: string) =>
  (await call('GET', `${stack.api}/emails/${id}`, { token: stack.apiKey })).body.status as string;
const reaches = (id: string, status: string) => eventually(async () => (await statusOf(id)) === status, 30_000);
const messageOf = (id: string) =>
  eventually(async () => stack.sink.messages.find((m) => m.parsed.headers.get('x-mail-email-id') === id), 30_000);

async function send(to: string): Promise<string> {
  const res = await call<{ id: string }>('POST', `${stack.api}/emails`, {
    token: stack.apiKey,
    body: validEmail({ to: [to] }),
  });
  expect(res.status, res.text).toBe(200);
  return res.body.id;
}

async function traffic(): Promise<void> {
  for (const [path, events] of [
    ['/flaky', ['delivery', 'bounce', 'complaint']],
    ['/down', ['send']],
  ] as const) {
    const hook = await admin(stack, 'POST', `/accounts/${stack.accountId}/webhooks`, {
      url: `${receiver.url}${path}`,
      events,
    });
    expect(hook.status, hook.text).toBe(200);
  }
  const [complained, refused, reported, deferred] = await Promise.all([
    send('reader@example.net'),
    send('bounce@example.net'),
    send('later@example.net'),
    send('full@example.net'),
  ]);
  await Promise.all([
    reaches(complained, 'delivered'),
    reaches(refused, 'bounced'),
    reaches(reported, 'delivered'),
    reaches(deferred, 'bounced'),
  ]);

  // A complaint and a bounce report, mailed to the return path each message went out with.
  const complainedMessage = await messageOf(complained);
  const arf = buildArf({ feedbackType: 'abuse', originalHeaders: headerBlock(complainedMessage.raw) });
  expect(await mailReport(stack.mailer.inboundUrl!, arf, [complainedMessage.envelopeFrom])).toMatch(/^250 /);
  const reportedMessage = await messageOf(reported);
  expect(
    await mailReport(stack.mailer.inboundUrl!, buildDsn({ recipient: 'later@example.net' }), [
      reportedMessage.envelopeFrom,
    ]),
  ).toMatch(/^250 /);
  await Promise.all([reaches(complained, 'complained'), reaches(reported, 'bounced')]);

  const scheduled = await call<{ id: string }>('POST', `${stack.api}/emails/schedule`, {
    token: stack.apiKey,
    body: {
      ...validEmail({ subject: 'scheduled for the metrics' }),
      scheduled_at: new Date(Date.now() + 1500).toISOString(),
    },
  });
  expect(scheduled.status, scheduled.text).toBe(200);
  await eventually(
    async () => stack.sink.messages.some((m) => m.parsed.subject === 'scheduled for the metrics'),
    30_000,
  );

  await rpcTraffic(complained);
  // Every event has reached /flaky, and /down's deliveries have spent their four attempts.
  await eventually(async () => receiver.on('/flaky').filter((h) => h.body.event === 'complaint').length > 0, 30_000);
  await eventually(
    async () => {
      const [row] = await stack.mailer.sql<
        { n: number }[]
      >`select count(*)::int as n from webhook_deliveries where status = 'pending'`;
      return row!.n === 0;
    },
    40_000,
    200,
  );
}

async function rpcTraffic(emailId: string): Promise<void> {
  ok(await rpc(clients.email, 'GetEmail', { id: emailId }, bearer(stack.apiKey)));
  expect(failed(await rpc(clients.email, 'ListEmails', {}, bearer('mk_wrong'))).code).toBe(grpc.status.UNAUTHENTICATED);
  expect(
    failed(await rpc(clients.email, 'GetEmail', { id: 'em_00000000000000000000000000' }, bearer(stack.apiKey))).code,
  ).toBe(grpc.status.NOT_FOUND);
  // Over GetEmail's read limit: refused before any interceptor runs.
  expect(failed(await rpc(clients.email, 'GetEmail', { id: 'x'.repeat(1_100_000) }, bearer(stack.apiKey))).code).toBe(
    grpc.status.RESOURCE_EXHAUSTED,
  );
  const connect = createClient(
    EmailService,
    createConnectTransport({ baseUrl: `http://${stack.grpcAddress}`, httpVersion: '2' }),
  );
  await connect.listEmails({}, { headers: { authorization: `Bearer ${stack.apiKey}` } });
  const refused = await connect.listEmails({}).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(refused).toBeInstanceOf(ConnectError);
  expect((refused as ConnectError).code).toBe(Code.Unauthenticated);
}

describe('/metrics after traffic (role all)', () => {
  it('is valid Prometheus text, each family declared once, with the process and Temporal SDK metrics', () => {
    expect(() => parseExposition(after.text)).not.toThrow();
    expect(after.types.get('mailer_process_cpu_seconds_total')).toBe('counter');
    expect(after.sum('mailer_process_resident_memory_bytes')).toBeGreaterThan(0);
    // The SDK's metrics, drained from its buffer: the worker of this stack's task queue, and its tasks' latencies.
    expect(after.types.get('temporal_workflow_task_schedule_to_start_latency_seconds')).toBe('histogram');
    expect(after.sum('temporal_worker_task_slots_available', { task_queue: stack.taskQueue })).toBeGreaterThan(0);
    expect(
      after.sum('temporal_workflow_task_execution_latency_seconds_count', { task_queue: stack.taskQueue }),
    ).toBeGreaterThan(0);
    expect(delta('temporal_request_total')).toBeGreaterThan(0);
  });

  it('counts each delivery outcome and bounce where it was seen: SMTP refusals in the worker, reports at the listener', () => {
    // Three sent (two direct, the scheduled one); one refused by the server; one deferred twice (its attempt
    // and its one retry), then bounced as Transient when the retry budget was spent.
    expect(delta('mailer_deliveries_total', { outcome: 'sent' })).toBe(3);
    expect(delta('mailer_deliveries_total', { outcome: 'bounced' })).toBe(2);
    expect(delta('mailer_deliveries_total', { outcome: 'soft' })).toBe(2);
    expect(delta('mailer_deliveries_total', { outcome: 'rejected' })).toBe(0);
    expect(delta('mailer_bounces_total', { type: 'Permanent', subtype: 'General', source: 'smtp' })).toBe(1);
    expect(delta('mailer_bounces_total', { type: 'Transient', subtype: 'General', source: 'smtp' })).toBe(1);
    expect(delta('mailer_bounces_total', { type: 'Permanent', subtype: 'General', source: 'report' })).toBe(1);
    expect(delta('mailer_complaints_total', { feedback_type: 'abuse' })).toBe(1);
    expect(delta('mailer_inbound_reports_total', { outcome: 'recorded' })).toBe(2);
  });

  it('counts webhook attempts by outcome and status class, discards, and times POSTs and event-to-receiver', async () => {
    const delivered = delta('mailer_webhook_attempts_total', { outcome: 'delivered', status_class: '2xx' });
    const retrying = delta('mailer_webhook_attempts_total', { outcome: 'retrying', status_class: '5xx' });
    const failedLast = delta('mailer_webhook_attempts_total', { outcome: 'failed', status_class: '5xx' });
    // /flaky: delivery x3 (two direct, the scheduled one), bounce x3 (refused, deferred, reported), complaint;
    // the first of them failed once. /down: five sends, each tried four times, then discarded.
    expect(delivered).toBe(7);
    expect(retrying).toBe(1 + 5 * 3);
    expect(failedLast).toBe(5);
    expect(delta('mailer_webhook_discards_total', { reason: 'retries_exhausted' })).toBe(5);
    // The same as the attempts the service recorded.
    const [recorded] = await stack.mailer.sql<{ ok: number; failed: number; discarded: number }[]>`
      select count(*) filter (where status_code between 200 and 299)::int as ok, count(*) filter (where status_code not between 200 and 299)::int as failed,
        (select count(*)::int from webhook_deliveries where status = 'discarded') as discarded
      from webhook_attempts`;
    expect([delivered, retrying + failedLast, failedLast]).toEqual([
      recorded!.ok,
      recorded!.failed,
      recorded!.discarded,
    ]);
    expect(delta('mailer_webhook_post_duration_seconds_count')).toBe(delivered + retrying + failedLast);
    expect(delta('mailer_webhook_event_latency_seconds_count')).toBe(delivered);
    // The retried event waited out its one-second backoff before its 2xx.
    const overOneSecond =
      delta('mailer_webhook_event_latency_seconds_bucket', { le: '+Inf' }) -
      delta('mailer_webhook_event_latency_seconds_bucket', { le: '1' });
    expect(overOneSecond).toBeGreaterThanOrEqual(1);
  });

  it('observes how late the scheduled email fired', () => {
    expect(delta('mailer_scheduled_lateness_seconds_count', { fired_by: 'timer' })).toBe(1);
    const late = delta('mailer_scheduled_lateness_seconds_sum', { fired_by: 'timer' });
    expect(late).toBeGreaterThanOrEqual(0);
    expect(late).toBeLessThan(30);
  });

  it('counts REST requests per route, and gRPC and Connect calls per service, method, code and protocol', () => {
    expect(delta('mailer_http_requests_total', { method: 'POST', route: '/v1/mail/emails', status: '200' })).toBe(4);
    expect(delta('mailer_http_request_duration_seconds_count', { method: 'POST', route: '/v1/mail/emails' })).toBe(4);
    const rpcs = (method: string, code: string, protocol: string) =>
      delta('mailer_rpc_requests_total', { service: 'mail.v1.EmailService', method, code, protocol });
    expect(rpcs('GetEmail', 'OK', 'grpc')).toBe(1);
    expect(rpcs('GetEmail', 'NotFound', 'grpc')).toBe(1);
    expect(rpcs('GetEmail', 'ResourceExhausted', 'grpc')).toBe(1);
    expect(rpcs('ListEmails', 'Unauthenticated', 'grpc')).toBe(1);
    expect(rpcs('ListEmails', 'OK', 'connect')).toBe(1);
    expect(rpcs('ListEmails', 'Unauthenticated', 'connect')).toBe(1);
    expect(
      delta('mailer_rpc_request_duration_seconds_count', { service: 'mail.v1.EmailService', method: 'GetEmail' }),
    ).toBe(3);
  });

  it('reports the delivery queue, drained by now', () => {
    expect(after.sum('mailer_delivery_queue_depth', { state: 'waiting' })).toBe(0);
    expect(after.has('mailer_delivery_queue_depth', { state: 'claimed' })).toBe(true);
    expect(after.sum('mailer_delivery_queue_oldest_age_seconds')).toBe(0);
  });

  it('every metric the Grafana dashboard queries is one this scrape has', () => {
    const { used, missing } = checkDashboard(after);
    // The extraction found the dashboard's metrics (an empty list would make this check vacuous).
    expect(used.length).toBeGreaterThan(20);
    expect(missing).toEqual([]);
  });
});
