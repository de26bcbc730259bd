import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { admin, createKey, createSender } from '../helpers/admin-fixtures.js';
import {
  bearer,
  expectSameError,
  failed,
  loadClients,
  ok,
  rpc,
  type GrpcClient,
  type Obj,
} from '../helpers/grpc-client.js';
import { call, eventually, validEmail } from '../helpers/http.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * Scheduled and batch RPCs over gRPC through a client that shares nothing with the server (@grpc/grpc-js
 * with the .proto files loaded at run time, snake_case names): the same records answer the same over gRPC
 * as over REST, and errors carry REST's code, message and `error` text.
 */

const emailRpc = (method: string, req: Obj, metadata: grpc.Metadata) => rpc(client, method, req, metadata);

/** A batch job as JSON shows it: proto-loader's reading of the unset optional completed_at is made JSON's (absent). */
function asJson(job: Obj): Obj {
  const { completed_at, _completed_at, ...rest } = job;
  void _completed_at;
  return completed_at === undefined || completed_at === null ? rest : { ...rest, completed_at };
}

const stack = useStack();

/** The list requests REST and gRPC must answer alike, as [REST query, gRPC request]: none, pages 1 and 2 of one, each status. */
const listQueries = (...statuses: string[]): [string, Obj][] => [
  ['', {}],
  ...[1, 2].map((page): [string, Obj] => [`?page=${page}&limit=1`, { page, limit: 1 }]),
  ...statuses.map((status): [string, Obj] => [`?status=${status}`, { status }]),
];
let client: GrpcClient;
const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  client = loadClients(stack.grpcAddress).email;
  stack.sink.refuseRecipient = (address) =>
    address.endsWith('@refused.example') ? '550 5.1.1 no such user' : undefined;
});
afterEach(() => {
  stack.sink.beforeAccept = async () => {};
});
afterAll(async () => {
  client?.close();
});

describe('scheduled emails over gRPC', () => {
  it('ScheduleEmail answers as POST /emails/schedule; GetScheduledEmail and ListScheduledEmails answer what REST answers', async () => {
    const at = inMs(3_600_000);
    const scheduled = ok(
      await emailRpc(
        'ScheduleEmail',
        { ...validEmail({ subject: 'grpc later', to: ['later@example.net'] }), scheduled_at: at },
        bearer(stack.apiKey),
      ),
    );
    expect(scheduled).toEqual({ id: expect.stringMatching(/^sch_[0-9a-z]{26}$/), status: 'enqueued' });
    const id = scheduled.id as string;
    const viaRest = await call('POST', `${stack.api}/emails/schedule`, {
      token: stack.apiKey,
      body: { ...validEmail({ subject: 'rest later' }), scheduled_at: at },
    });
    expect(Object.keys(viaRest.body).sort()).toEqual(Object.keys(scheduled).sort());

    const rest = await call('GET', `${stack.api}/emails/scheduled/${id}`, { token: stack.apiKey });
    expect(rest.status).toBe(200);
    const got = ok(await emailRpc('GetScheduledEmail', { id }, bearer(stack.apiKey)));
    expect(got).toEqual(rest.body);
    expect(got).toMatchObject({
      id,
      subject: 'grpc later',
      scheduled_at: at,
      status: 'enqueued',
      attempts: 0,
      to: ['later@example.net'],
    });

    for (const [query, req] of listQueries('scheduled', 'cancelled')) {
      const restList = await call('GET', `${stack.api}/emails/scheduled${query}`, { token: stack.apiKey });
      expect(restList.status).toBe(200);
      expect(ok(await emailRpc('ListScheduledEmails', req, bearer(stack.apiKey))), query).toEqual(restList.body);
    }
    const all = ok(await emailRpc('ListScheduledEmails', {}, bearer(stack.apiKey)));
    expect(all.total_count).toBe(2);

    for (const x of [id, viaRest.body.id as string])
      expect((await call('DELETE', `${stack.api}/emails/scheduled/${x}`, { token: stack.apiKey })).status).toBe(200);
  });

  it('CancelScheduledEmail answers {success, message} as DELETE does; cancelling again and cancelling a sent one answer as REST', async () => {
    const id = ok(
      await emailRpc(
        'ScheduleEmail',
        { ...validEmail({ subject: 'grpc cancel' }), scheduled_at: inMs(3_600_000) },
        bearer(stack.apiKey),
      ),
    ).id as string;
    const cancelled = ok(await emailRpc('CancelScheduledEmail', { id }, bearer(stack.apiKey)));
    expect(cancelled).toEqual({ success: true, message: expect.any(String) });
    const restGet = await call('GET', `${stack.api}/emails/scheduled/${id}`, { token: stack.apiKey });
    expect(restGet.body.status).toBe('cancelled');
    expect(ok(await emailRpc('GetScheduledEmail', { id }, bearer(stack.apiKey)))).toEqual(restGet.body);

    const restAgain = await call('DELETE', `${stack.api}/emails/scheduled/${id}`, { token: stack.apiKey });
    expect(restAgain.status).toBe(200);
    expect(ok(await emailRpc('CancelScheduledEmail', { id }, bearer(stack.apiKey)))).toEqual(restAgain.body);

    // One that fired: it arrives at its time, then cancelling it is INVALID_ARGUMENT with REST's 400 text.
    const at = inMs(1_500);
    const fired = ok(
      await emailRpc(
        'ScheduleEmail',
        { ...validEmail({ subject: 'grpc fired' }), scheduled_at: at },
        bearer(stack.apiKey),
      ),
    ).id as string;
    const msg = await eventually(
      async () => stack.sink.messages.find((m) => m.parsed.subject === 'grpc fired'),
      10_000,
      20,
    );
    const restSent = await eventually(async () => {
      const r = await call('GET', `${stack.api}/emails/scheduled/${fired}`, { token: stack.apiKey });
      return r.body.status === 'sent' ? r : undefined;
    });
    expect(ok(await emailRpc('GetScheduledEmail', { id: fired }, bearer(stack.apiKey)))).toEqual(restSent.body);
    expect(restSent.body.attempts).toBe(1);
    const emails = await call<{ data: { id: string }[] }>('GET', `${stack.api}/emails?job_id=${fired}`, {
      token: stack.apiKey,
    });
    expect(msg.messageId).toBe(`<${emails.body.data[0]!.id}@example.com>`);
    const restRefused = await call('DELETE', `${stack.api}/emails/scheduled/${fired}`, { token: stack.apiKey });
    expect(restRefused.status).toBe(400);
    expectSameError(
      failed(await emailRpc('CancelScheduledEmail', { id: fired }, bearer(stack.apiKey))),
      grpc.status.INVALID_ARGUMENT,
      restRefused.body as { error: string; message: string },
    );
    expect(ok(await emailRpc('ListScheduledEmails', { status: 'sent' }, bearer(stack.apiKey)))).toEqual(
      (await call('GET', `${stack.api}/emails/scheduled?status=sent`, { token: stack.apiKey })).body,
    );
  });
});

describe('scheduled emails over gRPC', () => {
  it("errors match REST: bad scheduled_at, a send_only key cancelling, another account's id, limit over 100, the quota", async () => {
    const badAt = { ...validEmail(), scheduled_at: '2030-01-01T09:00:00' };
    const rest1 = await call('POST', `${stack.api}/emails/schedule`, { token: stack.apiKey, body: badAt });
    expect(rest1.status).toBe(400);
    expectSameError(
      failed(await emailRpc('ScheduleEmail', badAt, bearer(stack.apiKey))),
      grpc.status.INVALID_ARGUMENT,
      rest1.body as { error: string; message: string },
    );

    const id = ok(
      await emailRpc('ScheduleEmail', { ...validEmail(), scheduled_at: inMs(3_600_000) }, bearer(stack.apiKey)),
    ).id as string;
    const sendOnly = await createKey(stack, stack.accountId, 'send_only');
    const rest2 = await call('DELETE', `${stack.api}/emails/scheduled/${id}`, { token: sendOnly.key });
    expect(rest2.status).toBe(403);
    expectSameError(
      failed(await emailRpc('CancelScheduledEmail', { id }, bearer(sendOnly.key))),
      grpc.status.PERMISSION_DENIED,
      rest2.body as { error: string; message: string },
    );

    const other = await createSender(stack, 'grpc other', 'grpc-other.example');
    const rest3 = await call('GET', `${stack.api}/emails/scheduled/${id}`, { token: other.key });
    expect(rest3.status).toBe(404);
    expectSameError(
      failed(await emailRpc('GetScheduledEmail', { id }, bearer(other.key))),
      grpc.status.NOT_FOUND,
      rest3.body as { error: string; message: string },
    );
    expectSameError(
      failed(await emailRpc('CancelScheduledEmail', { id }, bearer(other.key))),
      grpc.status.NOT_FOUND,
      rest3.body as { error: string; message: string },
    );

    const rest4 = await call('GET', `${stack.api}/emails/scheduled?limit=101`, { token: stack.apiKey });
    expect(rest4.status).toBe(400);
    expectSameError(
      failed(await emailRpc('ListScheduledEmails', { limit: 101 }, bearer(stack.apiKey))),
      grpc.status.INVALID_ARGUMENT,
      rest4.body as { error: string; message: string },
    );

    await admin(stack, 'PATCH', `/accounts/${other.accountId}`, { daily_quota: 1 });
    const body = { ...validEmail({ from: 'o@grpc-other.example' }), scheduled_at: inMs(3_600_000) };
    const first = ok(await emailRpc('ScheduleEmail', body, bearer(other.key)));
    const rest5 = await call('POST', `${stack.api}/emails/schedule`, { token: other.key, body });
    expect(rest5.status).toBe(429);
    expectSameError(
      failed(await emailRpc('ScheduleEmail', body, bearer(other.key))),
      grpc.status.RESOURCE_EXHAUSTED,
      rest5.body as { error: string },
    );

    expect(ok(await emailRpc('CancelScheduledEmail', { id }, bearer(stack.apiKey))).success).toBe(true);
    expect(ok(await emailRpc('CancelScheduledEmail', { id: first.id }, bearer(other.key))).success).toBe(true);
  });

  it('an Idempotency-Key in the metadata answers the same scheduled email again', async () => {
    const before = ok(await emailRpc('ListScheduledEmails', {}, bearer(stack.apiKey))).total_count as number;
    const req = { ...validEmail({ subject: 'grpc idem' }), scheduled_at: inMs(3_600_000) };
    const a = ok(await emailRpc('ScheduleEmail', req, bearer(stack.apiKey, { 'idempotency-key': 'grpc-sched-1' })));
    const b = ok(await emailRpc('ScheduleEmail', req, bearer(stack.apiKey, { 'idempotency-key': 'grpc-sched-1' })));
    expect(b).toEqual(a);
    expect(ok(await emailRpc('ListScheduledEmails', {}, bearer(stack.apiKey))).total_count).toBe(before + 1);
    expect(ok(await emailRpc('CancelScheduledEmail', { id: a.id }, bearer(stack.apiKey))).success).toBe(true);
  });
});

describe('batch jobs over gRPC', () => {
  it('SendBatch answers as POST /emails/batch; GetBatchJob answers what REST answers while running and when completed', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    stack.sink.beforeAccept = async (raw) => {
      if (/^subject: grpc batch 2/im.test(raw.toString('latin1'))) await held;
    };
    const emails = [0, 1, 2].map((i) => ({
      ...validEmail({ subject: `grpc batch ${i}`, to: [`b${i}@example.net`] }),
      cc: [`cc${i}@example.net`],
      tags: { n: String(i) },
      headers: { 'X-N': String(i) },
      attachments: [
        { filename: `f${i}.txt`, content: Buffer.from(`file ${i}`).toString('base64'), content_type: 'text/plain' },
      ],
    }));
    const sent = ok(await emailRpc('SendBatch', { emails }, bearer(stack.apiKey)));
    expect(sent).toEqual({ job_id: expect.stringMatching(/^bat_[0-9a-z]{26}$/), status: 'pending', total_count: 3 });
    const jobId = sent.job_id as string;

    // Two sent, the third held by the receiving server: running, no completed_at on either side.
    const restRunning = await eventually(async () => {
      const r = await call('GET', `${stack.api}/emails/batch/${jobId}`, { token: stack.apiKey });
      return r.body.sent_count === 2 ? r : undefined;
    });
    expect(restRunning.body.status).toBe('processing');
    expect('completed_at' in restRunning.body).toBe(false);
    const grpcRunning = ok(await emailRpc('GetBatchJob', { id: jobId }, bearer(stack.apiKey)));
    expect(grpcRunning.completed_at ?? '').toBe('');
    expect(asJson(grpcRunning)).toEqual(restRunning.body);
    const restProcessing = await call('GET', `${stack.api}/emails/batch?status=processing`, { token: stack.apiKey });
    const grpcProcessing = ok(await emailRpc('ListBatchJobs', { status: 'processing' }, bearer(stack.apiKey)));
    expect({ ...grpcProcessing, batch_jobs: (grpcProcessing.batch_jobs as Obj[]).map(asJson) }).toEqual(
      restProcessing.body,
    );
    expect(restProcessing.body.total_count).toBe(1);

    release();
    const restDone = await eventually(async () => {
      const r = await call('GET', `${stack.api}/emails/batch/${jobId}`, { token: stack.apiKey });
      return r.body.status === 'completed' ? r : undefined;
    });
    expect(restDone.body).toMatchObject({ sent_count: 3, failed_count: 0, completed_at: expect.any(String) });
    expect(asJson(ok(await emailRpc('GetBatchJob', { id: jobId }, bearer(stack.apiKey))))).toEqual(restDone.body);

    // A copy per recipient: two of each email.
    const arrived = stack.sink.messages.filter((m) => (m.parsed.subject ?? '').startsWith('grpc batch '));
    expect([...new Set(arrived.map((m) => m.parsed.subject))].sort()).toEqual([
      'grpc batch 0',
      'grpc batch 1',
      'grpc batch 2',
    ]);
    for (const m of arrived) {
      const i = m.parsed.subject!.slice(-1);
      const copies = arrived.filter((x) => x.parsed.subject === m.parsed.subject);
      expect(copies.flatMap((x) => x.envelopeTo).sort()).toEqual([`b${i}@example.net`, `cc${i}@example.net`]);
      expect(m.parsed.headers.get('x-n')).toBe(i);
      expect(m.parsed.attachments.map((a) => a.content.toString())).toEqual([`file ${i}`]);
    }
  });

  it('ListBatchJobs answers the same page REST answers, with the same filters', async () => {
    const failing = ok(
      await emailRpc(
        'SendBatch',
        { emails: [validEmail({ to: ['x@refused.example'], subject: 'grpc refused' })] },
        bearer(stack.apiKey),
      ),
    );
    await eventually(
      async () =>
        (await call('GET', `${stack.api}/emails/batch/${failing.job_id as string}`, { token: stack.apiKey })).body
          .status === 'failed',
    );
    for (const [query, req] of listQueries('completed', 'failed', 'pending')) {
      const rest = await call<{ batch_jobs: Obj[]; total_count: number }>('GET', `${stack.api}/emails/batch${query}`, {
        token: stack.apiKey,
      });
      expect(rest.status).toBe(200);
      const viaGrpc = ok(await emailRpc('ListBatchJobs', req, bearer(stack.apiKey)));
      expect({ ...viaGrpc, batch_jobs: (viaGrpc.batch_jobs as Obj[]).map(asJson) }, query).toEqual(rest.body);
    }
    const failedOnly = ok(await emailRpc('ListBatchJobs', { status: 'failed' }, bearer(stack.apiKey)));
    expect((failedOnly.batch_jobs as Obj[]).map((j) => j.job_id)).toEqual([failing.job_id]);
  });
});

describe('batch jobs over gRPC', () => {
  it("errors match REST: an item naming emails[i].field, over 100 emails, another account's job, a bad status, the quota", async () => {
    const bad = { emails: [validEmail(), validEmail(), validEmail({ subject: '' })] };
    const rest1 = await call('POST', `${stack.api}/emails/batch`, { token: stack.apiKey, body: bad });
    expect(rest1.status).toBe(400);
    expect(rest1.body.message).toMatch(/emails\[2\]\.subject/);
    expectSameError(
      failed(await emailRpc('SendBatch', bad, bearer(stack.apiKey))),
      grpc.status.INVALID_ARGUMENT,
      rest1.body as { error: string; message: string },
    );

    const tooMany = { emails: Array.from({ length: 101 }, () => validEmail()) };
    const rest2 = await call('POST', `${stack.api}/emails/batch`, { token: stack.apiKey, body: tooMany });
    expect(rest2.status).toBe(400);
    expectSameError(
      failed(await emailRpc('SendBatch', tooMany, bearer(stack.apiKey))),
      grpc.status.INVALID_ARGUMENT,
      rest2.body as { error: string; message: string },
    );

    const other = await createSender(stack, 'grpc batch other', 'grpc-batch-other.example');
    const theirs = ok(
      await emailRpc('SendBatch', { emails: [validEmail({ from: 'o@grpc-batch-other.example' })] }, bearer(other.key)),
    ).job_id as string;
    const rest3 = await call('GET', `${stack.api}/emails/batch/${theirs}`, { token: stack.apiKey });
    expect(rest3.status).toBe(404);
    expectSameError(
      failed(await emailRpc('GetBatchJob', { id: theirs }, bearer(stack.apiKey))),
      grpc.status.NOT_FOUND,
      rest3.body as { error: string; message: string },
    );

    const rest4 = await call('GET', `${stack.api}/emails/batch?status=done`, { token: stack.apiKey });
    expectSameError(
      failed(await emailRpc('ListBatchJobs', { status: 'done' }, bearer(stack.apiKey))),
      grpc.status.INVALID_ARGUMENT,
      rest4.body as { error: string; message: string },
    );

    await admin(stack, 'PATCH', `/accounts/${other.accountId}`, { daily_quota: 3 });
    const three = { emails: [1, 2, 3].map(() => validEmail({ from: 'o@grpc-batch-other.example' })) };
    const rest5 = await call('POST', `${stack.api}/emails/batch`, { token: other.key, body: three });
    expect(rest5.status).toBe(429);
    expect(rest5.body.error).toMatch(/^daily quota exceeded \(1\/3\), /);
    expectSameError(
      failed(await emailRpc('SendBatch', three, bearer(other.key))),
      grpc.status.RESOURCE_EXHAUSTED,
      rest5.body as { error: string },
    );
  });

  it('an Idempotency-Key in the metadata answers the same job again and sends once', async () => {
    const req = { emails: [validEmail({ subject: 'grpc batch idem' })] };
    const a = ok(await emailRpc('SendBatch', req, bearer(stack.apiKey, { 'idempotency-key': 'grpc-batch-1' })));
    const b = ok(await emailRpc('SendBatch', req, bearer(stack.apiKey, { 'idempotency-key': 'grpc-batch-1' })));
    expect(b).toEqual(a);
    const c = failed(
      await emailRpc(
        'SendBatch',
        { emails: [validEmail({ subject: 'other' })] },
        bearer(stack.apiKey, { 'idempotency-key': 'grpc-batch-1' }),
      ),
    );
    expect(c.code).toBe(grpc.status.INVALID_ARGUMENT);
    await eventually(async () => stack.sink.messages.some((m) => m.parsed.subject === 'grpc batch idem'));
    await sleep(500);
    expect(stack.sink.messages.filter((m) => m.parsed.subject === 'grpc batch idem')).toHaveLength(1);
  });
});
