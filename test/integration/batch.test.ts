import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { admin, createKey, createSender } from '../helpers/admin-fixtures.js';
import { call, eventually, validEmail, type JsonResponse } from '../helpers/http.js';
import { useStack } from '../helpers/use-stack.js';


/**
 * Batch jobs against the real service: PostgreSQL, Temporal and a receiving SMTP server that refuses
 * recipients at @refused.example permanently (550 5.1.1).
 */

type Obj = Record<string, unknown>;
interface BatchJob {
  job_id: string;
  total_count: number;
  sent_count: number;
  failed_count: number;
  status: string;
  created_at: string;
  completed_at?: string;
}

const stack = useStack();
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const nextUtcMidnight = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)).toISOString();

beforeAll(async () => {
  stack.sink.refuseRecipient = (address) => (address.endsWith('@refused.example') ? '550 5.1.1 no such user' : undefined);
});
afterEach(() => {
  stack.sink.beforeAccept = async () => {};
});

function sendBatch(token: string, body: unknown, headers: Record<string, string> = {}): Promise<JsonResponse> {
  return call('POST', `${stack.api}/emails/batch`, { token, body, headers });
}

async function sendBatchOk(token: string, emails: Obj[]): Promise<string> {
  const res = await sendBatch(token, { emails });
  expect(res.status, res.text).toBe(200);
  return res.body.job_id as string;
}

function getJob(id: string, token = stack.apiKey): Promise<JsonResponse<BatchJob>> {
  return call<BatchJob>('GET', `${stack.api}/emails/batch/${id}`, { token });
}

function listJobs(query: string, token = stack.apiKey): Promise<JsonResponse<{ batch_jobs: BatchJob[]; total_count: number; error?: string; message?: string }>> {
  return call('GET', `${stack.api}/emails/batch${query}`, { token });
}

async function finished(id: string, token = stack.apiKey, timeoutMs = 30_000): Promise<BatchJob> {
  return eventually(async () => {
    const r = await getJob(id, token);
    return r.body.status === 'completed' || r.body.status === 'failed' ? r.body : undefined;
  }, timeoutMs, 50);
}

async function emailsOfJob(jobId: string, token = stack.apiKey): Promise<{ data: { id: string; subject: string; status: string; to: string[] }[]; total: number }> {
  const res = await call<{ data: { id: string; subject: string; status: string; to: string[] }[]; total: number }>(
    'GET', `${stack.api}/emails?job_id=${jobId}&page_size=100`, { token });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

const items = (n: number, tag: string, extra: (i: number) => Obj = () => ({})) =>
  Array.from({ length: n }, (_, i) => validEmail({ to: [`r${i}@example.net`], subject: `${tag} ${i}`, text: `body ${i} of ${tag}`, ...extra(i) }));
const arrivedWithTag = (tag: string) => stack.sink.messages.filter((m) => (m.parsed.subject ?? '').startsWith(`${tag} `));

describe('POST /emails/batch', () => {
  it('answers {job_id: "bat_...", status: "pending", total_count}; every item keeps its own cc, bcc, reply_to, attachments, headers and tags', async () => {
    const emails = [
      validEmail({
        to: ['one@example.net'], cc: ['one-cc@example.net'], bcc: ['one-bcc@example.net'], reply_to: ['one-reply@example.com'],
        subject: 'full 0', html: '<p>first <b>one</b></p>', headers: { 'X-Item': 'zero' }, tags: { item: '0' },
        attachments: [{ filename: 'a.txt', content: Buffer.from('first file').toString('base64'), content_type: 'text/plain' }],
      }),
      validEmail({
        from: 'Other <other@example.com>', to: ['two@example.net', 'two-b@example.net'], reply_to: ['two-reply@example.com'],
        subject: 'full 1', text: 'second one', headers: { 'X-Item': 'one', 'X-Extra': 'more' }, tags: { item: '1', kind: 'b' },
        attachments: [
          { filename: 'b.csv', content: Buffer.from('x,y\n1,2\n').toString('base64'), content_type: 'text/csv' },
          { filename: 'c.bin', content: Buffer.from([0, 1, 2, 255]).toString('base64') },
        ],
      }),
      validEmail({ to: ['three@example.net'], bcc: ['three-bcc@example.net'], subject: 'full 2' }),
    ];
    const res = await sendBatch(stack.apiKey, { emails });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ job_id: expect.stringMatching(/^bat_[0-9a-z]{26}$/), status: 'pending', total_count: 3 });
    const jobId = res.body.job_id as string;

    const done = await finished(jobId);
    expect(done).toEqual({
      job_id: jobId, total_count: 3, sent_count: 3, failed_count: 0, status: 'completed',
      created_at: expect.stringMatching(ISO), completed_at: expect.stringMatching(ISO),
    });
    expect(Date.parse(done.completed_at!)).toBeGreaterThanOrEqual(Date.parse(done.created_at));

    const msgs = arrivedWithTag('full');
    expect(msgs).toHaveLength(3);
    const bySubject = new Map(msgs.map((m) => [m.parsed.subject!, m]));
    const m0 = bySubject.get('full 0')!;
    expect(m0.envelopeFrom).toBe('sender@example.com');
    expect(m0.envelopeTo.sort()).toEqual(['one-bcc@example.net', 'one-cc@example.net', 'one@example.net']);
    expect(m0.raw.toString()).not.toContain('one-bcc@example.net');
    expect(m0.parsed.replyTo?.text).toBe('one-reply@example.com');
    expect(m0.parsed.html).toContain('<b>one</b>');
    expect(m0.parsed.headers.get('x-item')).toBe('zero');
    expect(m0.parsed.attachments.map((a) => [a.filename, a.content.toString()])).toEqual([['a.txt', 'first file']]);
    const m1 = bySubject.get('full 1')!;
    expect(m1.envelopeFrom).toBe('other@example.com');
    expect(m1.envelopeTo.sort()).toEqual(['two-b@example.net', 'two@example.net']);
    expect(m1.parsed.replyTo?.text).toBe('two-reply@example.com');
    expect(m1.parsed.text?.trim()).toBe('second one');
    expect(m1.parsed.headers.get('x-item')).toBe('one');
    expect(m1.parsed.headers.get('x-extra')).toBe('more');
    expect(m1.parsed.headers.has('x-item-zero')).toBe(false);
    expect(m1.parsed.attachments.map((a) => [a.filename, a.contentType, a.content.toString('hex')]))
      .toEqual([['b.csv', 'text/csv', Buffer.from('x,y\n1,2\n').toString('hex')], ['c.bin', 'application/octet-stream', '000102ff']]);
    const m2 = bySubject.get('full 2')!;
    expect(m2.envelopeTo.sort()).toEqual(['three-bcc@example.net', 'three@example.net']);
    expect(m2.parsed.attachments).toHaveLength(0);
    expect(m2.parsed.headers.has('x-item')).toBe(false);

    // Stored as batch emails of this job, each with its own fields.
    const listed = await emailsOfJob(jobId);
    expect(listed.total).toBe(3);
    for (const e of listed.data) {
      const detail = await call('GET', `${stack.api}/emails/${e.id}`, { token: stack.apiKey });
      expect(detail.body).toMatchObject({ job_type: 'batch', job_id: jobId, status: 'delivered', message_id: expect.stringMatching(/^<em_/) });
      expect(bySubject.get(detail.body.subject as string)!.messageId).toBe(detail.body.message_id);
      if (detail.body.subject === 'full 1') {
        expect(detail.body).toMatchObject({ tags: { item: '1', kind: 'b' }, headers: { 'X-Item': 'one', 'X-Extra': 'more' }, reply_to: ['two-reply@example.com'] });
      }
      if (detail.body.subject === 'full 0') {
        expect(detail.body).toMatchObject({ tags: { item: '0' }, cc: ['one-cc@example.net'], bcc: ['one-bcc@example.net'] });
      }
    }
    const filtered = await call<{ total: number }>('GET', `${stack.api}/emails?job_type=batch&job_id=${jobId}`, { token: stack.apiKey });
    expect(filtered.body.total).toBe(3);
    const direct = await call<{ total: number }>('GET', `${stack.api}/emails?job_type=direct&job_id=${jobId}`, { token: stack.apiKey });
    expect(direct.body.total).toBe(0);
  });

  it('0 or 101 emails, a missing list, or one bad item is 400 naming emails[i].field; nothing is stored or sent', async () => {
    const jobsBefore = (await listJobs('')).body.total_count;
    const emailsBefore = (await call<{ total: number }>('GET', `${stack.api}/emails`, { token: stack.apiKey })).body.total;
    const sinkBefore = stack.sink.messages.length;

    const cases: [string, unknown, RegExp][] = [
      ['no emails', { emails: [] }, /emails/],
      ['no list', {}, /emails/],
      ['101 emails', { emails: items(101, 'too many') }, /101.*100/],
      ['emails[3] without a subject', { emails: items(5, 'bad', (i) => (i === 3 ? { subject: '' } : {})) }, /emails\[3\]\.subject/],
      ['emails[4] with a 999-character subject', { emails: items(5, 'bad', (i) => (i === 4 ? { subject: 'x'.repeat(999) } : {})) }, /emails\[4\]\.subject.*999.*998/],
      ['emails[1] with a bad recipient', { emails: items(3, 'bad', (i) => (i === 1 ? { to: ['nope'] } : {})) }, /emails\[1\]\.to\[0\]/],
      ['emails[2] with a reserved header', { emails: items(3, 'bad', (i) => (i === 2 ? { headers: { From: 'x@example.com' } } : {})) }, /emails\[2\]\.headers/],
      ['emails[0] with 11 attachments', {
        emails: items(2, 'bad', (i) => (i === 0 ? { attachments: Array.from({ length: 11 }, (_, k) => ({ filename: `f${k}.txt`, content: 'eA==' })) } : {})),
      }, /emails\[0\]\.attachments.*11.*10/],
      ['emails[1] with 51 recipients', { emails: items(2, 'bad', (i) => (i === 1 ? { to: Array.from({ length: 51 }, (_, k) => `r${k}@example.net`) } : {})) }, /emails\[1\]\.to.*51.*50/],
    ];
    for (const [what, body, message] of cases) {
      const res = await sendBatch(stack.apiKey, body);
      expect(res.status, `${what}: ${res.text}`).toBe(400);
      expect(res.body.error, what).toBe('validation error');
      expect(res.body.message, what).toMatch(message);
    }
    expect((await listJobs('')).body.total_count).toBe(jobsBefore);
    expect((await call<{ total: number }>('GET', `${stack.api}/emails`, { token: stack.apiKey })).body.total).toBe(emailsBefore);
    await sleep(300);
    expect(stack.sink.messages.length).toBe(sinkBefore);
  });

  it('a read_only key is 403; one item from an unverified domain makes the whole batch 403; send_only may send', async () => {
    const jobsBefore = (await listJobs('')).body.total_count;
    const reader = await createKey(stack, stack.accountId, 'read_only');
    const r1 = await sendBatch(reader.key, { emails: items(2, 'ro') });
    expect(r1.status).toBe(403);
    expect(r1.body.error).toBe('permission denied');

    const r2 = await sendBatch(stack.apiKey, { emails: items(3, 'unverified', (i) => (i === 2 ? { from: 'x@not-verified.example' } : {})) });
    expect(r2.status).toBe(403);
    expect(r2.body.error).toBe('permission denied');
    const restricted = await createKey(stack, stack.accountId, 'all', ['example.com']);
    const r3 = await sendBatch(restricted.key, { emails: [validEmail(), validEmail({ from: 'y@elsewhere.example' })] });
    expect(r3.status).toBe(403);
    expect((await listJobs('')).body.total_count).toBe(jobsBefore);
    await sleep(300);
    expect(arrivedWithTag('unverified')).toHaveLength(0);

    const sender = await createKey(stack, stack.accountId, 'send_only');
    const jobId = await sendBatchOk(sender.key, items(2, 'send-only'));
    expect((await finished(jobId)).sent_count).toBe(2);
    expect((await getJob(jobId, reader.key)).status).toBe(200);
  });

  it('the quota counts the whole batch: 6 over a quota of 5 is 429 and nothing is sent; 5 fit', async () => {
    const s = await createSender(stack, 'batch quota', 'batch-quota.example');
    await admin(stack, 'PATCH', `/accounts/${s.accountId}`, { daily_quota: 5 });
    const from = { from: 'b@batch-quota.example' };

    const at = new Date();
    const refused = await sendBatch(s.key, { emails: items(6, 'quota six', () => from) });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: `daily quota exceeded (0/5), resets at ${nextUtcMidnight(at)}` });
    expect((await admin<{ sent_today: number }>(stack, 'GET', `/accounts/${s.accountId}`)).body.sent_today).toBe(0);
    expect((await listJobs('', s.key)).body.total_count).toBe(0);

    const jobId = await sendBatchOk(s.key, items(5, 'quota five', () => from));
    expect((await finished(jobId, s.key)).sent_count).toBe(5);
    expect(arrivedWithTag('quota six')).toHaveLength(0);
    expect(arrivedWithTag('quota five')).toHaveLength(5);
    expect((await admin<{ sent_today: number }>(stack, 'GET', `/accounts/${s.accountId}`)).body.sent_today).toBe(5);

    const full = await sendBatch(s.key, { emails: items(1, 'quota one', () => from) });
    expect(full.status).toBe(429);
    expect(full.body.error).toMatch(/^daily quota exceeded \(5\/5\), resets at /);
  });

  it('an Idempotency-Key answers the first job again and sends each email once; another body with the key is 400', async () => {
    const jobsBefore = (await listJobs('')).body.total_count;
    const body = { emails: items(3, 'idem batch') };
    const first = await sendBatch(stack.apiKey, body, { 'idempotency-key': 'batch-idem-1' });
    expect(first.status).toBe(200);
    const again = await sendBatch(stack.apiKey, body, { 'idempotency-key': 'batch-idem-1' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const other = await sendBatch(stack.apiKey, { emails: items(2, 'idem other') }, { 'idempotency-key': 'batch-idem-1' });
    expect(other.status).toBe(400);

    await finished(first.body.job_id as string);
    expect((await listJobs('')).body.total_count).toBe(jobsBefore + 1);
    await sleep(500);
    expect(arrivedWithTag('idem batch')).toHaveLength(3);
    expect(arrivedWithTag('idem other')).toHaveLength(0);
  });
});

describe('GET /emails/batch/:id while the job runs', () => {
  it('counters move and never go backwards; completed_at is absent until the end, which is exact', async () => {
    const N = 100;
    const GATE = 40;
    const tag = 'progress';
    let arrived = 0;
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => {
      openGate = resolve;
    });
    // A slow receiving server, which also stops answering after the 40th message until the test has looked.
    stack.sink.beforeAccept = async (raw) => {
      if (!/^subject: progress /im.test(raw.toString('latin1'))) return;
      arrived += 1;
      if (arrived > GATE) await gate;
      await sleep(20);
    };

    const res = await sendBatch(stack.apiKey, { emails: items(N, tag) });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'pending', total_count: N });
    const jobId = res.body.job_id as string;

    const seen: BatchJob[] = [];
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const r = await getJob(jobId);
        expect(r.status).toBe(200);
        seen.push(r.body);
        if (r.body.status === 'completed' || r.body.status === 'failed') break;
        await sleep(10);
      }
    })();

    // Held at the gate: the job is visibly half-way.
    const halfway = await eventually(async () => {
      const last = seen[seen.length - 1];
      return last && last.sent_count === GATE ? last : undefined;
    }, 30_000, 10);
    expect(halfway.status).toBe('processing');
    expect(halfway.failed_count).toBe(0);
    expect('completed_at' in halfway).toBe(false);
    await sleep(300);
    expect((await getJob(jobId)).body).toMatchObject({ sent_count: GATE, status: 'processing' });
    openGate();

    await poller;
    polling = false;
    const last = seen[seen.length - 1]!;
    expect(last).toEqual({
      job_id: jobId, total_count: N, sent_count: N, failed_count: 0, status: 'completed',
      created_at: expect.stringMatching(ISO), completed_at: expect.stringMatching(ISO),
    });

    const rank: Record<string, number> = { pending: 0, processing: 1, completed: 2, failed: 2 };
    for (let i = 1; i < seen.length; i++) {
      const [a, b] = [seen[i - 1]!, seen[i]!];
      expect(b.sent_count, `poll ${i}`).toBeGreaterThanOrEqual(a.sent_count);
      expect(b.failed_count, `poll ${i}`).toBeGreaterThanOrEqual(a.failed_count);
      expect(rank[b.status]!, `poll ${i}: ${a.status} -> ${b.status}`).toBeGreaterThanOrEqual(rank[a.status]!);
    }
    for (const s of seen) {
      expect(s.total_count).toBe(N);
      expect(s.sent_count + s.failed_count).toBeLessThanOrEqual(N);
      if (s.status === 'completed') expect(s.completed_at).toMatch(ISO);
      else expect('completed_at' in s).toBe(false);
      // A job is only completed once every email reached its outcome.
      if (s.status === 'completed') expect(s.sent_count).toBe(N);
    }
    const distinct = new Set(seen.map((s) => s.sent_count));
    expect(distinct.size).toBeGreaterThan(3);
    console.info(`batch progress: ${seen.length} polls, ${distinct.size} distinct sent_count values, ` +
      `statuses ${[...new Set(seen.map((s) => s.status))].join(' -> ')}`);

    // Every email arrived exactly once and is listed with the job.
    const msgs = arrivedWithTag(tag);
    expect(msgs).toHaveLength(N);
    expect(new Set(msgs.map((m) => m.messageId)).size).toBe(N);
    const listed = await emailsOfJob(jobId);
    expect(listed.total).toBe(N);
    expect(listed.data.every((e) => e.status === 'delivered')).toBe(true);
    expect(new Set(listed.data.map((e) => `<${e.id}@example.com>`))).toEqual(new Set(msgs.map((m) => m.messageId)));
  }, 90_000);
});

describe('permanent refusals', () => {
  it('a refused recipient fails its email without stopping the rest: 10 with 3 refused is sent 7, failed 3, completed', async () => {
    const refused = new Set([2, 5, 9]);
    const jobId = await sendBatchOk(stack.apiKey, items(10, 'partial', (i) => (refused.has(i) ? { to: [`nobody${i}@refused.example`] } : {})));
    const done = await finished(jobId);
    expect(done).toMatchObject({ total_count: 10, sent_count: 7, failed_count: 3, status: 'completed', completed_at: expect.stringMatching(ISO) });

    const listed = await emailsOfJob(jobId);
    expect(listed.total).toBe(10);
    for (const e of listed.data) {
      const i = Number(e.subject.split(' ')[1]);
      expect(e.status, e.subject).toBe(refused.has(i) ? 'bounced' : 'delivered');
    }
    await sleep(300);
    expect(arrivedWithTag('partial').map((m) => m.parsed.subject).sort())
      .toEqual([0, 1, 3, 4, 6, 7, 8].map((i) => `partial ${i}`).sort());
  });

  it('a batch where every email is refused ends failed, with completed_at', async () => {
    const jobId = await sendBatchOk(stack.apiKey, items(4, 'all refused', (i) => ({ to: [`gone${i}@refused.example`] })));
    const done = await finished(jobId);
    expect(done).toEqual({
      job_id: jobId, total_count: 4, sent_count: 0, failed_count: 4, status: 'failed',
      created_at: expect.stringMatching(ISO), completed_at: expect.stringMatching(ISO),
    });
    const listed = await emailsOfJob(jobId);
    expect(listed.data.map((e) => e.status)).toEqual(['bounced', 'bounced', 'bounced', 'bounced']);
    const bouncedFilter = await call<{ total: number }>('GET', `${stack.api}/emails?job_id=${jobId}&status=bounced`, { token: stack.apiKey });
    expect(bouncedFilter.body.total).toBe(4);
    expect(arrivedWithTag('all refused')).toHaveLength(0);
  });
});

describe('GET /emails/batch', () => {
  it('answers {batch_jobs, total_count}, newest first, with page and limit and the status filter', async () => {
    const s = await createSender(stack, 'batch lister', 'batch-lister.example');
    const from = () => ({ from: 'l@batch-lister.example' });
    const completed: string[] = [];
    for (let i = 0; i < 21; i++) completed.push(await sendBatchOk(s.key, items(1, `lister ${i}`, from)));
    const failedJob = await sendBatchOk(s.key, items(2, 'lister failing', (i) => ({ ...from(), to: [`x${i}@refused.example`] })));
    for (const id of completed) await finished(id, s.key);
    await finished(failedJob, s.key);

    // One more, held in processing by the receiving server until the test has listed it.
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    stack.sink.beforeAccept = async (raw) => {
      if (/^subject: lister held /im.test(raw.toString('latin1'))) await held;
    };
    const running = await sendBatchOk(s.key, items(1, 'lister held', from));
    await eventually(async () => (await getJob(running, s.key)).body.status === 'processing', 20_000);

    const newestFirst = [running, failedJob, ...completed.slice().reverse()];
    const all = await listJobs('', s.key);
    expect(all.status).toBe(200);
    expect(Object.keys(all.body).sort()).toEqual(['batch_jobs', 'total_count']);
    expect(all.body.total_count).toBe(23);
    expect(all.body.batch_jobs.map((j) => j.job_id)).toEqual(newestFirst.slice(0, 20));
    expect(all.body.batch_jobs[0]).toEqual({
      job_id: running, total_count: 1, sent_count: 0, failed_count: 0, status: 'processing', created_at: expect.stringMatching(ISO),
    });
    expect(all.body.batch_jobs[1]).toMatchObject({ job_id: failedJob, status: 'failed', failed_count: 2, completed_at: expect.stringMatching(ISO) });
    expect((await listJobs('?page=2', s.key)).body.batch_jobs.map((j) => j.job_id)).toEqual(newestFirst.slice(20));
    expect((await listJobs('?page=3&limit=4', s.key)).body.batch_jobs.map((j) => j.job_id)).toEqual(newestFirst.slice(8, 12));
    expect((await listJobs('?limit=100', s.key)).body.batch_jobs).toHaveLength(23);

    const byStatus = async (status: string) => (await listJobs(`?status=${status}&limit=100`, s.key)).body;
    const c = await byStatus('completed');
    expect(c.total_count).toBe(21);
    expect(c.batch_jobs.map((j) => j.job_id).sort()).toEqual([...completed].sort());
    expect(c.batch_jobs.every((j) => j.status === 'completed' && j.sent_count === 1)).toBe(true);
    expect((await byStatus('failed')).batch_jobs.map((j) => j.job_id)).toEqual([failedJob]);
    expect((await byStatus('processing')).batch_jobs.map((j) => j.job_id)).toEqual([running]);
    const pending = await listJobs('?status=pending', s.key);
    expect(pending.status).toBe(200);
    expect(pending.body).toEqual({ batch_jobs: [], total_count: 0 });

    for (const q of ['?limit=101', '?status=done', '?status=sent', '?page=-2']) {
      const res = await listJobs(q, s.key);
      expect(res.status, q).toBe(400);
      expect(res.body.error).toBe('validation error');
    }

    release();
    expect((await finished(running, s.key)).status).toBe('completed');
    // A read_only key of the account lists them; other accounts see none of them.
    const reader = await createKey(stack, s.accountId, 'read_only');
    expect((await listJobs('', reader.key)).body.total_count).toBe(23);
    const mine = await listJobs('?limit=100');
    expect(mine.body.batch_jobs.map((j) => j.job_id)).not.toContain(running);
  }, 90_000);

  it('an unknown job and another account\'s job are 404 with the contract body', async () => {
    const unknown = 'bat_00000000000000000000000000';
    const res = await getJob(unknown);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not found', message: `batch job ${unknown} not found` });

    const other = await createSender(stack, 'other batcher', 'other-batch.example');
    const theirs = await sendBatchOk(other.key, items(1, 'theirs', () => ({ from: 'o@other-batch.example' })));
    const denied = await getJob(theirs);
    expect(denied.status).toBe(404);
    expect(denied.body).toEqual({ error: 'not found', message: `batch job ${theirs} not found` });
    expect((await emailsOfJob(theirs)).total).toBe(0);
    expect((await finished(theirs, other.key)).status).toBe('completed');
    // An email id is not a job id.
    const emailId = (await emailsOfJob(theirs, other.key)).data[0]!.id;
    expect((await getJob(emailId, other.key)).status).toBe(404);
  });
});
