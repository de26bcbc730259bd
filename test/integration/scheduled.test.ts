import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, createKey, createSender } from '../helpers/admin-fixtures.js';
import { call, eventually, validEmail, type JsonResponse } from '../helpers/http.js';
import { useStack } from '../helpers/use-stack.js';


/**
 * Scheduled sends against the real service: PostgreSQL, Temporal (delayed-start workflows) and a receiving
 * SMTP server. Times are measured at the receiving server, on the same clock as the service.
 */

type Obj = Record<string, unknown>;
interface Scheduled {
  id: string;
  from: string;
  to: string[];
  subject: string;
  scheduled_at: string;
  status: string;
  created_at: string;
  attempts: number;
}

const stack = useStack();
/** When each Message-ID reached the receiving server (before its 250), by the test's clock. */
const arrivals = new Map<string, number>();
/** Lateness of every scheduled send that fired in this file, for the report. */
const lateness: number[] = [];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();
const messageIdOf = (raw: Buffer) => /^message-id:\s*(\S+)/im.exec(raw.toString('latin1'))?.[1] ?? '';
const nextUtcMidnight = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)).toISOString();

beforeAll(async () => {
  stack.sink.beforeAccept = async (raw) => {
    arrivals.set(messageIdOf(raw), Date.now());
  };
});
afterAll(async () => {
  if (lateness.length > 0) {
    const sorted = [...lateness].sort((a, b) => a - b);
    console.info(`scheduled sends: lateness at the receiving server over ${sorted.length} sends: ` +
      `min ${sorted[0]} ms, median ${sorted[Math.floor(sorted.length / 2)]} ms, max ${sorted[sorted.length - 1]} ms`);
  }
});

function schedule(token: string, body: Obj, headers: Record<string, string> = {}): Promise<JsonResponse> {
  return call('POST', `${stack.api}/emails/schedule`, { token, body, headers });
}

async function scheduleOk(token: string, body: Obj): Promise<string> {
  const res = await schedule(token, body);
  expect(res.status, res.text).toBe(200);
  return res.body.id as string;
}

async function getScheduled(id: string, token = stack.apiKey): Promise<JsonResponse<Scheduled>> {
  return call<Scheduled>('GET', `${stack.api}/emails/scheduled/${id}`, { token });
}

function cancel(id: string, token = stack.apiKey): Promise<JsonResponse> {
  return call('DELETE', `${stack.api}/emails/scheduled/${id}`, { token });
}

async function listScheduled(query: string, token = stack.apiKey): Promise<JsonResponse<{ scheduled_emails: Scheduled[]; total_count: number; error?: string; message?: string }>> {
  return call('GET', `${stack.api}/emails/scheduled${query}`, { token });
}

/** The emails a scheduled email created (GET /emails filtered by job). */
async function emailsOf(jobId: string, token = stack.apiKey): Promise<{ data: { id: string; subject: string; status: string }[]; total: number }> {
  const res = await call<{ data: { id: string; subject: string; status: string }[]; total: number }>(
    'GET', `${stack.api}/emails?job_type=scheduled&job_id=${jobId}`, { token });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

const arrivedWithSubject = (subject: string) => stack.sink.messages.filter((m) => m.parsed.subject === subject);

describe('POST /emails/schedule', () => {
  it('answers {id: "sch_...", status: "enqueued"}; the scheduled email reads back with the given time, attempts 0', async () => {
    const at = inMs(3_600_000);
    const res = await schedule(stack.apiKey, { ...validEmail({ subject: 'Later', to: ['later@example.net'] }), scheduled_at: at });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ id: expect.stringMatching(/^sch_[0-9a-z]{26}$/), status: 'enqueued' });
    const id = res.body.id as string;

    const got = await getScheduled(id);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      id,
      from: 'Sender <sender@example.com>',
      to: ['later@example.net'],
      subject: 'Later',
      scheduled_at: at,
      status: 'enqueued',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      attempts: 0,
    });
    expect(Date.parse(got.body.created_at)).toBeLessThanOrEqual(Date.now());
    // Nothing is created before the time comes.
    expect((await emailsOf(id)).total).toBe(0);
    expect((await cancel(id)).status).toBe(200);
  });

  it('scheduled_at with an offset zone is the same instant in UTC; 29 days ahead is accepted', async () => {
    const target = new Date(Date.now() + 2 * 3_600_000);
    target.setUTCMilliseconds(0);
    // The same instant written in +05:30.
    const local = new Date(target.getTime() + 5.5 * 3_600_000).toISOString().slice(0, 19) + '+05:30';
    const id = await scheduleOk(stack.apiKey, { ...validEmail(), scheduled_at: local });
    expect((await getScheduled(id)).body.scheduled_at).toBe(target.toISOString());

    const far = await scheduleOk(stack.apiKey, { ...validEmail(), scheduled_at: inMs(29 * 86_400_000) });
    expect((await getScheduled(far)).body.status).toBe('enqueued');
    for (const x of [id, far]) expect((await cancel(x)).status).toBe(200);
  });

  it('every single-send rule applies, and scheduled_at must parse, carry a zone, lie in the future and at most 30 days ahead; nothing is stored', async () => {
    const before = (await listScheduled('')).body.total_count;
    const future = inMs(3_600_000);
    const bad: [string, Obj, RegExp][] = [
      ['missing subject', { ...validEmail({ subject: '' }), scheduled_at: future }, /subject/],
      ['999-character subject', { ...validEmail({ subject: 's'.repeat(999) }), scheduled_at: future }, /subject.*999.*998/],
      ['bad recipient', { ...validEmail({ to: ['not an address'] }), scheduled_at: future }, /to\[0\]/],
      ['no html nor text', { ...validEmail({ text: '' }), scheduled_at: future }, /html.*text/],
      ['scheduled_at missing', { ...validEmail() }, /scheduled_at/],
      ['scheduled_at garbage', { ...validEmail(), scheduled_at: 'tomorrow at nine' }, /scheduled_at/],
      ['scheduled_at without a zone', { ...validEmail(), scheduled_at: future.slice(0, 19) }, /scheduled_at/],
      ['scheduled_at a date only', { ...validEmail(), scheduled_at: future.slice(0, 10) }, /scheduled_at/],
      // Refused as no date at all, not rolled over to March 2 (and then judged by its distance).
      ['scheduled_at impossible date', { ...validEmail(), scheduled_at: '2030-02-30T09:00:00Z' }, /scheduled_at.*not an ISO 8601/],
      ['scheduled_at impossible time', { ...validEmail(), scheduled_at: future.slice(0, 11) + '25:00:00Z' }, /scheduled_at.*not an ISO 8601/],
      ['scheduled_at in the past', { ...validEmail(), scheduled_at: inMs(-60_000) }, /scheduled_at.*future/],
      ['scheduled_at now', { ...validEmail(), scheduled_at: new Date().toISOString() }, /scheduled_at.*future/],
      ['scheduled_at 31 days ahead', { ...validEmail(), scheduled_at: inMs(31 * 86_400_000) }, /scheduled_at.*30 days/],
    ];
    for (const [what, body, message] of bad) {
      const res = await schedule(stack.apiKey, body);
      expect(res.status, `${what}: ${res.text}`).toBe(400);
      expect(res.body.error, what).toBe('validation error');
      expect(res.body.message, what).toMatch(message);
    }
    expect((await listScheduled('')).body.total_count).toBe(before);
  });

  it('read_only keys cannot schedule (403); an unverified or disallowed sender domain is 403 at request time', async () => {
    const before = (await listScheduled('')).body.total_count;
    const body = { ...validEmail(), scheduled_at: inMs(3_600_000) };
    const readOnly = await createKey(stack, stack.accountId, 'read_only');
    const r1 = await schedule(readOnly.key, body);
    expect(r1.status).toBe(403);
    expect(r1.body.error).toBe('permission denied');

    const r2 = await schedule(stack.apiKey, { ...body, from: 'someone@unverified-domain.example' });
    expect(r2.status).toBe(403);
    expect(r2.body.error).toBe('permission denied');

    const restricted = await createKey(stack, stack.accountId, 'send_only', ['elsewhere.example']);
    const r3 = await schedule(restricted.key, body);
    expect(r3.status).toBe(403);
    expect(r3.body.message).toMatch(/example\.com/);

    // send_only may schedule.
    const sendOnly = await createKey(stack, stack.accountId, 'send_only');
    const id = await scheduleOk(sendOnly.key, body);
    expect((await listScheduled('')).body.total_count).toBe(before + 1);
    expect((await cancel(id)).status).toBe(200);
  });

  it('the quota is counted when the request is accepted, once (not again when the email fires); over it is 429 with the spec body', async () => {
    const s = await createSender(stack, 'scheduled quota', 'sched-quota.example');
    await admin(stack, 'PATCH', `/accounts/${s.accountId}`, { daily_quota: 2 });
    const body = (i: number, ms = 3_600_000) => ({ ...validEmail({ from: 'q@sched-quota.example', subject: `quota ${i}` }), scheduled_at: inMs(ms) });
    const sentToday = async () => (await admin<{ sent_today: number }>(stack, 'GET', `/accounts/${s.accountId}`)).body.sent_today;

    const fires = await scheduleOk(s.key, body(1, 800));
    expect(await sentToday()).toBe(1);
    await eventually(async () => (await getScheduled(fires, s.key)).body.status === 'sent', 10_000);
    await eventually(async () => arrivedWithSubject('quota 1').length === 1, 10_000);
    expect(await sentToday()).toBe(1);

    const waiting = await scheduleOk(s.key, body(2));
    expect(await sentToday()).toBe(2);
    const refusedAt = new Date();
    const refused = await schedule(s.key, body(3));
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: `daily quota exceeded (2/2), resets at ${nextUtcMidnight(refusedAt)}` });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await listScheduled('', s.key)).body.total_count).toBe(2);
    // Reads stay available.
    expect((await getScheduled(waiting, s.key)).status).toBe(200);
    expect((await cancel(waiting, s.key)).status).toBe(200);
  });

  it('an Idempotency-Key answers the first answer again and schedules one email; another body with the key is 400', async () => {
    const before = (await listScheduled('')).body.total_count;
    const body = { ...validEmail({ subject: 'idempotent schedule' }), scheduled_at: inMs(3_600_000) };
    const first = await schedule(stack.apiKey, body, { 'idempotency-key': 'sched-idem-1' });
    expect(first.status).toBe(200);
    const again = await schedule(stack.apiKey, body, { 'idempotency-key': 'sched-idem-1' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect((await listScheduled('')).body.total_count).toBe(before + 1);

    const other = await schedule(stack.apiKey, { ...body, subject: 'another body' }, { 'idempotency-key': 'sched-idem-1' });
    expect(other.status).toBe(400);
    expect((await listScheduled('')).body.total_count).toBe(before + 1);
    expect((await cancel(first.body.id as string)).status).toBe(200);
  });
});

describe('firing', () => {
  let firedId = '';

  it('fires at its time, never early: the email arrives at or after scheduled_at, late by under 2 s, and is listed as job_type scheduled', async () => {
    const subject = `on time ${Date.now()}`;
    const at = inMs(2_500);
    const attachment = { filename: 'plan.txt', content: Buffer.from('the plan').toString('base64'), content_type: 'text/plain' };
    const id = await scheduleOk(stack.apiKey, {
      ...validEmail({
        subject, to: ['ontime@example.net'], cc: ['cc@example.net'], bcc: ['bcc@example.net'], reply_to: ['reply@example.com'],
        html: '<p>on <b>time</b></p>', headers: { 'X-Sched': 'yes' }, tags: { kind: 'scheduled' }, attachments: [attachment],
      }),
      scheduled_at: at,
    });
    firedId = id;

    // Shortly before its time nothing has happened yet.
    await sleep(Math.max(0, Date.parse(at) - Date.now() - 400));
    expect(arrivedWithSubject(subject)).toHaveLength(0);
    expect((await getScheduled(id)).body.status).toBe('enqueued');
    expect((await emailsOf(id)).total).toBe(0);

    const msg = await eventually(async () => arrivedWithSubject(subject)[0], 10_000, 10);
    const arrivedAt = arrivals.get(msg.messageId)!;
    const late = arrivedAt - Date.parse(at);
    lateness.push(late);
    expect(late).toBeGreaterThanOrEqual(0);
    expect(late).toBeLessThan(4_000);

    const listed = await eventually(async () => {
      const l = await emailsOf(id);
      return l.total === 1 && l.data[0]!.status === 'delivered' ? l : undefined;
    });
    expect(listed.data).toEqual([expect.objectContaining({ subject, status: 'delivered' })]);
    const emailId = listed.data[0]!.id;
    expect(emailId).toMatch(/^em_/);
    expect(msg.messageId).toBe(`<${emailId}@example.com>`);
    expect(msg.envelopeTo.sort()).toEqual(['bcc@example.net', 'cc@example.net', 'ontime@example.net']);
    expect(msg.parsed.html).toContain('<b>time</b>');
    expect(msg.parsed.headers.get('x-sched')).toBe('yes');
    expect(msg.parsed.replyTo?.text).toBe('reply@example.com');
    expect(msg.parsed.attachments.map((a) => [a.filename, a.content.toString()])).toEqual([['plan.txt', 'the plan']]);

    const email = await call('GET', `${stack.api}/emails/${emailId}`, { token: stack.apiKey });
    expect(email.body).toMatchObject({
      id: emailId, job_type: 'scheduled', job_id: id, status: 'delivered', subject, tags: { kind: 'scheduled' },
      cc: ['cc@example.net'], bcc: ['bcc@example.net'], attachments: [attachment],
    });
    // The email list filtered by job type alone finds it too; direct sends are not scheduled ones.
    const byType = await call<{ data: { id: string }[] }>('GET', `${stack.api}/emails?job_type=scheduled&page_size=100`, { token: stack.apiKey });
    expect(byType.body.data.map((e) => e.id)).toContain(emailId);
    const direct = await call<{ data: { id: string }[] }>('GET', `${stack.api}/emails?job_type=direct&page_size=100`, { token: stack.apiKey });
    expect(direct.body.data.map((e) => e.id)).not.toContain(emailId);

    const detail = await getScheduled(id);
    expect(detail.body).toMatchObject({ id, status: 'sent', attempts: 1, scheduled_at: at, subject });
    expect(typeof detail.body.attempts).toBe('number');
    // Exactly once.
    await sleep(500);
    expect(stack.sink.counts().get(msg.messageId)).toBe(1);
  });

  it('several sends due at the same moment each fire once, none early', async () => {
    const at = inMs(2_000);
    const subjects = Array.from({ length: 5 }, (_, i) => `together ${i} ${Date.now()}`);
    const ids = await Promise.all(subjects.map((subject) => scheduleOk(stack.apiKey, { ...validEmail({ subject }), scheduled_at: at })));
    await eventually(async () => subjects.every((s) => arrivedWithSubject(s).length > 0), 10_000, 20);
    for (const subject of subjects) {
      const [msg, ...more] = arrivedWithSubject(subject);
      expect(more).toHaveLength(0);
      const late = arrivals.get(msg!.messageId)! - Date.parse(at);
      lateness.push(late);
      expect(late).toBeGreaterThanOrEqual(0);
      expect(late).toBeLessThan(4_000);
    }
    for (const id of ids) await eventually(async () => (await getScheduled(id)).body.status === 'sent');
  });

  it('DELETE of one already sent is 400, and it stays sent', async () => {
    expect(firedId).not.toBe('');
    const res = await cancel(firedId);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation error');
    expect(res.body.message).toMatch(/already sent/);
    expect((await getScheduled(firedId)).body.status).toBe('sent');
  });
});

describe('DELETE /emails/scheduled/:id', () => {
  it('cancels: {success: true, message}, status cancelled, and the email never arrives even after its time; again is 200', async () => {
    const subject = `cancelled ${Date.now()}`;
    const at = inMs(1_500);
    const id = await scheduleOk(stack.apiKey, { ...validEmail({ subject }), scheduled_at: at });
    const res = await cancel(id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, message: expect.any(String) });
    expect((res.body.message as string).length).toBeGreaterThan(0);
    expect((await getScheduled(id)).body).toMatchObject({ id, status: 'cancelled', attempts: 0 });

    // Well past its time: nothing was created, nothing arrived.
    await sleep(Math.max(0, Date.parse(at) - Date.now()) + 2_500);
    expect(arrivedWithSubject(subject)).toHaveLength(0);
    expect((await emailsOf(id)).total).toBe(0);
    expect((await getScheduled(id)).body.status).toBe('cancelled');

    const again = await cancel(id);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ success: true, message: expect.any(String) });
  });

  it('only keys with permission all may cancel: read_only and send_only are 403 and the email stays enqueued', async () => {
    const id = await scheduleOk(stack.apiKey, { ...validEmail(), scheduled_at: inMs(3_600_000) });
    for (const permission of ['read_only', 'send_only'] as const) {
      const { key } = await createKey(stack, stack.accountId, permission);
      const res = await cancel(id, key);
      expect(res.status, permission).toBe(403);
      expect(res.body.error).toBe('permission denied');
      // Both may read it.
      expect((await getScheduled(id, key)).body.status).toBe('enqueued');
    }
    expect((await cancel(id)).status).toBe(200);
  });

  it('an unknown id and another account\'s scheduled email are 404 with the contract body, for GET and DELETE', async () => {
    const unknown = 'sch_00000000000000000000000000';
    for (const res of [await cancel(unknown), await getScheduled(unknown)]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not found', message: `scheduled email ${unknown} not found` });
    }
    const other = await createSender(stack, 'other scheduler', 'other-sched.example');
    const theirs = await scheduleOk(other.key, { ...validEmail({ from: 'x@other-sched.example' }), scheduled_at: inMs(3_600_000) });
    for (const res of [await cancel(theirs), await getScheduled(theirs)]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not found', message: `scheduled email ${theirs} not found` });
    }
    expect((await listScheduled('')).body.scheduled_emails.map((s) => s.id)).not.toContain(theirs);
    // Still theirs, still waiting; they can cancel it.
    expect((await getScheduled(theirs, other.key)).body.status).toBe('enqueued');
    expect((await cancel(theirs, other.key)).status).toBe(200);
  });

  it('cancel racing the timer: each DELETE either cancels (nothing arrives) or is 400 already sent (it arrives once), never both, never neither', async () => {
    const PAIRS = 10;
    const due = Date.now() + 1_500;
    const subjects = Array.from({ length: PAIRS }, (_, i) => `race ${i} ${due}`);
    const ids = await Promise.all(subjects.map((subject) =>
      scheduleOk(stack.apiKey, { ...validEmail({ subject, to: ['race@example.net'] }), scheduled_at: new Date(due).toISOString() })));
    // DELETEs spread from just before the due time to well after the typical firing, so both outcomes occur.
    const answers = await Promise.all(ids.map(async (id, i) => {
      await sleep(Math.max(0, due - 100 + i * 60 - Date.now()));
      return cancel(id);
    }));

    // Past the due time by far: every fired one has arrived, no cancelled one can still arrive.
    await sleep(Math.max(0, due - Date.now()) + 3_000);
    const outcomes: string[] = [];
    for (let i = 0; i < PAIRS; i++) {
      const res = answers[i]!;
      const id = ids[i]!;
      if (res.status === 200) {
        outcomes.push('cancelled');
        expect(res.body.success).toBe(true);
        expect(arrivedWithSubject(subjects[i]!), `pair ${i}: cancelled yet arrived`).toHaveLength(0);
        expect((await emailsOf(id)).total).toBe(0);
        expect((await getScheduled(id)).body.status).toBe('cancelled');
      } else {
        outcomes.push('sent');
        expect(res.status, `pair ${i}: ${res.text}`).toBe(400);
        expect(res.body.message).toMatch(/already sent/);
        const arrived = await eventually(async () => {
          const a = arrivedWithSubject(subjects[i]!);
          return a.length > 0 ? a : undefined;
        }, 10_000);
        expect(arrived, `pair ${i}: sent but arrived ${arrived.length} times`).toHaveLength(1);
        const emails = await emailsOf(id);
        expect(emails.total).toBe(1);
        expect(arrived[0]!.messageId).toBe(`<${emails.data[0]!.id}@example.com>`);
        expect((await getScheduled(id)).body).toMatchObject({ status: 'sent', attempts: 1 });
        lateness.push(arrivals.get(arrived[0]!.messageId)! - due);
        expect(arrivals.get(arrived[0]!.messageId)!).toBeGreaterThanOrEqual(due);
      }
    }
    console.info(`cancel race: ${outcomes.filter((o) => o === 'cancelled').length} cancelled, ${outcomes.filter((o) => o === 'sent').length} already sent`);
  });
});

describe('GET /emails/scheduled', () => {
  it('answers {scheduled_emails, total_count}, newest first, with page and limit (default 20, max 100) and the status filter', async () => {
    const s = await createSender(stack, 'lister', 'lister.example');
    const body = (i: number, ms = 3_600_000) => ({ ...validEmail({ from: 'l@lister.example', subject: `list ${i}` }), scheduled_at: inMs(ms) });
    const waiting: string[] = [];
    for (let i = 0; i < 22; i++) waiting.push(await scheduleOk(s.key, body(i)));
    const cancelled = waiting.splice(0, 2);
    for (const id of cancelled) expect((await cancel(id, s.key)).status).toBe(200);
    const sent = await scheduleOk(s.key, body(99, 800));
    await eventually(async () => (await getScheduled(sent, s.key)).body.status === 'sent', 10_000);

    const all = await listScheduled('', s.key);
    expect(all.status).toBe(200);
    expect(Object.keys(all.body).sort()).toEqual(['scheduled_emails', 'total_count']);
    expect(all.body.total_count).toBe(23);
    expect(all.body.scheduled_emails).toHaveLength(20);
    const newestFirst = [sent, ...waiting.slice().reverse(), ...cancelled.slice().reverse()];
    expect(all.body.scheduled_emails.map((x) => x.id)).toEqual(newestFirst.slice(0, 20));
    expect(all.body.scheduled_emails[0]).toEqual({
      id: sent, from: 'l@lister.example', to: ['rcpt@example.net'], subject: 'list 99', scheduled_at: expect.any(String),
      status: 'sent', created_at: expect.any(String), attempts: 1,
    });

    const page2 = await listScheduled('?page=2&limit=20', s.key);
    expect(page2.body.scheduled_emails.map((x) => x.id)).toEqual(newestFirst.slice(20));
    expect(page2.body.total_count).toBe(23);
    const small = await listScheduled('?page=3&limit=5', s.key);
    expect(small.body.scheduled_emails.map((x) => x.id)).toEqual(newestFirst.slice(10, 15));
    expect((await listScheduled('?limit=100', s.key)).body.scheduled_emails).toHaveLength(23);

    const waitingList = await listScheduled('?status=scheduled&limit=100', s.key);
    expect(waitingList.body.total_count).toBe(20);
    expect(waitingList.body.scheduled_emails.map((x) => x.id).sort()).toEqual([...waiting].sort());
    expect(new Set(waitingList.body.scheduled_emails.map((x) => x.status))).toEqual(new Set(['enqueued']));

    const sentList = await listScheduled('?status=sent', s.key);
    expect(sentList.body.total_count).toBe(1);
    expect(sentList.body.scheduled_emails.map((x) => [x.id, x.status])).toEqual([[sent, 'sent']]);

    const cancelledList = await listScheduled('?status=cancelled', s.key);
    expect(cancelledList.body.total_count).toBe(2);
    expect(cancelledList.body.scheduled_emails.map((x) => x.id).sort()).toEqual([...cancelled].sort());
    expect(cancelledList.body.scheduled_emails.every((x) => x.status === 'cancelled')).toBe(true);

    for (const q of ['?limit=101', '?status=bogus', '?status=pending', '?page=-1']) {
      const res = await listScheduled(q, s.key);
      expect(res.status, q).toBe(400);
      expect(res.body.error).toBe('validation error');
    }
    expect((await listScheduled('?limit=101', s.key)).body.message).toMatch(/limit/);

    // A read_only key lists them too.
    const reader = await createKey(stack, s.accountId, 'read_only');
    expect((await listScheduled('', reader.key)).body.total_count).toBe(23);
    for (const id of waiting) expect((await cancel(id, s.key)).status).toBe(200);
  });
});
