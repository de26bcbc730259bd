import { describe, expect, it } from 'vitest';
import { createKey, createSender } from '../helpers/admin-fixtures.js';
import { call, eventually, validEmail } from '../helpers/http.js';
import { useScheduledStack } from '../helpers/scheduled-api.js';
import { inMs, sleep } from '../helpers/time.js';

/**
 * Scheduled sends against the real service: PostgreSQL, Temporal (delayed-start workflows) and a receiving
 * SMTP server. Times are measured at the receiving server, on the same clock as the service.
 */

const { stack, arrivals, lateness, scheduleOk, getScheduled, cancel, listScheduled, emailsOf, arrivedWithSubject } =
  useScheduledStack();

/** How late a message arrived after `at` (kept for the summary): never early, and under 4 s. */
function expectOnTime(messageId: string, at: string): void {
  const late = arrivals.get(messageId)! - Date.parse(at);
  lateness.push(late);
  expect(late).toBeGreaterThanOrEqual(0);
  expect(late).toBeLessThan(4_000);
}

/** The ids GET /emails lists for the job type alone. */
const idsOfJobType = async (type: string) =>
  (
    await call<{ data: { id: string }[] }>('GET', `${stack.api}/emails?job_type=${type}&page_size=100`, {
      token: stack.apiKey,
    })
  ).body.data.map((e) => e.id);

describe('firing', () => {
  let firedId = '';

  it('fires at its time, never early: the email arrives at or after scheduled_at, late by under 2 s, and is listed as job_type scheduled', async () => {
    const subject = `on time ${Date.now()}`;
    const at = inMs(2_500);
    const attachment = {
      filename: 'plan.txt',
      content: Buffer.from('the plan').toString('base64'),
      content_type: 'text/plain',
    };
    const id = await scheduleOk(stack.apiKey, {
      ...validEmail({
        subject,
        to: ['ontime@example.net'],
        cc: ['cc@example.net'],
        bcc: ['bcc@example.net'],
        reply_to: ['reply@example.com'],
        html: '<p>on <b>time</b></p>',
        headers: { 'X-Sched': 'yes' },
        tags: { kind: 'scheduled' },
        attachments: [attachment],
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
    expectOnTime(msg.messageId, at);

    const listed = await eventually(async () => {
      const l = await emailsOf(id);
      return l.total === 1 && l.data[0]!.status === 'delivered' ? l : undefined;
    });
    expect(listed.data).toEqual([expect.objectContaining({ subject, status: 'delivered' })]);
    const emailId = listed.data[0]!.id;
    expect(emailId).toMatch(/^em_/);
    expect(msg.messageId).toBe(`<${emailId}@example.com>`);
    // A copy per recipient (one Message-ID), fired together.
    const copies = await eventually(
      async () => (arrivedWithSubject(subject).length >= 3 ? arrivedWithSubject(subject) : undefined),
      10_000,
      10,
    );
    expect(copies.flatMap((m) => m.envelopeTo).sort()).toEqual([
      'bcc@example.net',
      'cc@example.net',
      'ontime@example.net',
    ]);
    expect(msg.parsed.html).toContain('<b>time</b>');
    expect(msg.parsed.headers.get('x-sched')).toBe('yes');
    expect(msg.parsed.replyTo?.text).toBe('reply@example.com');
    expect(msg.parsed.attachments.map((a) => [a.filename, a.content.toString()])).toEqual([['plan.txt', 'the plan']]);

    const email = await call('GET', `${stack.api}/emails/${emailId}`, { token: stack.apiKey });
    expect(email.body).toMatchObject({
      id: emailId,
      job_type: 'scheduled',
      job_id: id,
      status: 'delivered',
      subject,
      tags: { kind: 'scheduled' },
      cc: ['cc@example.net'],
      bcc: ['bcc@example.net'],
      attachments: [attachment],
    });
    // The email list filtered by job type alone finds it too; direct sends are not scheduled ones.
    expect(await idsOfJobType('scheduled')).toContain(emailId);
    expect(await idsOfJobType('direct')).not.toContain(emailId);

    const detail = await getScheduled(id);
    expect(detail.body).toMatchObject({ id, status: 'sent', attempts: 1, scheduled_at: at, subject });
    expect(typeof detail.body.attempts).toBe('number');
    // Exactly once: one copy for each of its three recipients.
    await sleep(500);
    expect(stack.sink.counts().get(msg.messageId)).toBe(3);
  });

  it('several sends due at the same moment each fire once, none early', async () => {
    const at = inMs(2_000);
    const subjects = Array.from({ length: 5 }, (_, i) => `together ${i} ${Date.now()}`);
    const ids = await Promise.all(
      subjects.map((subject) => scheduleOk(stack.apiKey, { ...validEmail({ subject }), scheduled_at: at })),
    );
    await eventually(async () => subjects.every((s) => arrivedWithSubject(s).length > 0), 10_000, 20);
    for (const subject of subjects) {
      const [msg, ...more] = arrivedWithSubject(subject);
      expect(more).toHaveLength(0);
      expectOnTime(msg!.messageId, at);
    }
    for (const id of ids) await eventually(async () => (await getScheduled(id)).body.status === 'sent');
  });

  it('emails scheduled seconds ahead are built before they are due: the one kept arrives once, on time, under the id the API lists; the one cancelled after it was built never arrives', async () => {
    // On a second boundary 7 s out: the second's workflow starts 5 s early and builds both messages first.
    const at = new Date(Math.ceil((Date.now() + 7_000) / 1000) * 1000).toISOString();
    const stamp = Date.now();
    const [keptSubject, cancelledSubject] = [`ahead kept ${stamp}`, `ahead cancelled ${stamp}`];
    const [kept, cancelled] = await Promise.all(
      [keptSubject, cancelledSubject].map((subject) =>
        scheduleOk(stack.apiKey, { ...validEmail({ subject, html: '<p>built <b>ahead</b></p>' }), scheduled_at: at }),
      ),
    );
    // Cancelling still works until the email is fired, built or not.
    await sleep(Math.max(0, Date.parse(at) - Date.now() - 1_500));
    expect((await cancel(cancelled!)).status).toBe(200);

    const msg = await eventually(async () => arrivedWithSubject(keptSubject)[0], 10_000, 10);
    expectOnTime(msg.messageId, at);
    const listed = await eventually(async () => {
      const l = await emailsOf(kept!);
      return l.total === 1 ? l : undefined;
    });
    expect(msg.messageId).toBe(`<${listed.data[0]!.id}@example.com>`);
    expect(msg.parsed.html).toContain('<b>ahead</b>');
    // The Date header is the time it was due.
    expect(msg.parsed.date?.toISOString()).toBe(at);
    await sleep(2_000);
    expect(arrivedWithSubject(cancelledSubject)).toHaveLength(0);
    expect((await emailsOf(cancelled!)).total).toBe(0);
    expect((await getScheduled(cancelled!)).body.status).toBe('cancelled');
    expect(stack.sink.counts().get(msg.messageId)).toBe(1);
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

  it("an unknown id and another account's scheduled email are 404 with the contract body, for GET and DELETE", async () => {
    const unknown = 'sch_00000000000000000000000000';
    for (const res of [await cancel(unknown), await getScheduled(unknown)]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not found', message: `scheduled email ${unknown} not found` });
    }
    const other = await createSender(stack, 'other scheduler', 'other-sched.example');
    const theirs = await scheduleOk(other.key, {
      ...validEmail({ from: 'x@other-sched.example' }),
      scheduled_at: inMs(3_600_000),
    });
    for (const res of [await cancel(theirs), await getScheduled(theirs)]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not found', message: `scheduled email ${theirs} not found` });
    }
    expect((await listScheduled('')).body.scheduled_emails.map((s) => s.id)).not.toContain(theirs);
    // Still theirs, still waiting; they can cancel it.
    expect((await getScheduled(theirs, other.key)).body.status).toBe('enqueued');
    expect((await cancel(theirs, other.key)).status).toBe(200);
  });
});

describe('DELETE /emails/scheduled/:id', () => {
  it('cancel racing the timer: each DELETE either cancels (nothing arrives) or is 400 already sent (it arrives once), never both, never neither', async () => {
    const PAIRS = 10;
    const due = Date.now() + 1_500;
    const subjects = Array.from({ length: PAIRS }, (_, i) => `race ${i} ${due}`);
    const ids = await Promise.all(
      subjects.map((subject) =>
        scheduleOk(stack.apiKey, {
          ...validEmail({ subject, to: ['race@example.net'] }),
          scheduled_at: new Date(due).toISOString(),
        }),
      ),
    );
    // DELETEs spread from just before the due time to well after the typical firing, so both outcomes occur.
    const answers = await Promise.all(
      ids.map(async (id, i) => {
        await sleep(Math.max(0, due - 100 + i * 60 - Date.now()));
        return cancel(id);
      }),
    );

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
    console.info(
      `cancel race: ${outcomes.filter((o) => o === 'cancelled').length} cancelled, ${outcomes.filter((o) => o === 'sent').length} already sent`,
    );
  });
});
