import { describe, expect, it } from 'vitest';
import { admin, createKey, createSender } from '../helpers/admin-fixtures.js';
import { eventually, expectValidationError, validEmail } from '../helpers/http.js';
import { useScheduledStack } from '../helpers/scheduled-api.js';
import { inMs, nextUtcMidnight } from '../helpers/time.js';

/**
 * Scheduled sends against the real service: PostgreSQL, Temporal (delayed-start workflows) and a receiving
 * SMTP server. Times are measured at the receiving server, on the same clock as the service.
 */

type Obj = Record<string, unknown>;
const { stack, schedule, scheduleOk, getScheduled, cancel, listScheduled, emailsOf, arrivedWithSubject } =
  useScheduledStack();

describe('POST /emails/schedule', () => {
  it('answers {id: "sch_...", status: "enqueued"}; the scheduled email reads back with the given time, attempts 0', async () => {
    const at = inMs(3_600_000);
    const res = await schedule(stack.apiKey, {
      ...validEmail({ subject: 'Later', to: ['later@example.net'] }),
      scheduled_at: at,
    });
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
      [
        '999-character subject',
        { ...validEmail({ subject: 's'.repeat(999) }), scheduled_at: future },
        /subject.*999.*998/,
      ],
      ['bad recipient', { ...validEmail({ to: ['not an address'] }), scheduled_at: future }, /to\[0\]/],
      ['no html nor text', { ...validEmail({ text: '' }), scheduled_at: future }, /html.*text/],
      ['scheduled_at missing', { ...validEmail() }, /scheduled_at/],
      ['scheduled_at garbage', { ...validEmail(), scheduled_at: 'tomorrow at nine' }, /scheduled_at/],
      ['scheduled_at without a zone', { ...validEmail(), scheduled_at: future.slice(0, 19) }, /scheduled_at/],
      ['scheduled_at a date only', { ...validEmail(), scheduled_at: future.slice(0, 10) }, /scheduled_at/],
      // Refused as no date at all, not rolled over to March 2 (and then judged by its distance).
      [
        'scheduled_at impossible date',
        { ...validEmail(), scheduled_at: '2030-02-30T09:00:00Z' },
        /scheduled_at.*not an ISO 8601/,
      ],
      [
        'scheduled_at impossible time',
        { ...validEmail(), scheduled_at: future.slice(0, 11) + '25:00:00Z' },
        /scheduled_at.*not an ISO 8601/,
      ],
      ['scheduled_at in the past', { ...validEmail(), scheduled_at: inMs(-60_000) }, /scheduled_at.*future/],
      ['scheduled_at now', { ...validEmail(), scheduled_at: new Date().toISOString() }, /scheduled_at.*future/],
      ['scheduled_at 31 days ahead', { ...validEmail(), scheduled_at: inMs(31 * 86_400_000) }, /scheduled_at.*30 days/],
    ];
    for (const [what, body, message] of bad) {
      expectValidationError(await schedule(stack.apiKey, body), what, message);
    }
    expect((await listScheduled('')).body.total_count).toBe(before);
  });
});

describe('POST /emails/schedule', () => {
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
    const body = (i: number, ms = 3_600_000) => ({
      ...validEmail({ from: 'q@sched-quota.example', subject: `quota ${i}` }),
      scheduled_at: inMs(ms),
    });
    const sentToday = async () =>
      (await admin<{ sent_today: number }>(stack, 'GET', `/accounts/${s.accountId}`)).body.sent_today;

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

    const other = await schedule(
      stack.apiKey,
      { ...body, subject: 'another body' },
      { 'idempotency-key': 'sched-idem-1' },
    );
    expect(other.status).toBe(400);
    expect((await listScheduled('')).body.total_count).toBe(before + 1);
    expect((await cancel(first.body.id as string)).status).toBe(200);
  });
});
