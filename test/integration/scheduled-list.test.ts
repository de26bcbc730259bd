import { describe, expect, it } from 'vitest';
import { createKey, createSender } from '../helpers/admin-fixtures.js';
import { eventually, validEmail } from '../helpers/http.js';
import { useScheduledStack } from '../helpers/scheduled-api.js';
import { inMs } from '../helpers/time.js';

/**
 * Scheduled sends against the real service: PostgreSQL, Temporal (delayed-start workflows) and a receiving
 * SMTP server. Times are measured at the receiving server, on the same clock as the service.
 */

const { stack, scheduleOk, getScheduled, cancel, listScheduled } = useScheduledStack();

describe('GET /emails/scheduled', () => {
  it('answers {scheduled_emails, total_count}, newest first, with page and limit (default 20, max 100) and the status filter', async () => {
    const s = await createSender(stack, 'lister', 'lister.example');
    const body = (i: number, ms = 3_600_000) => ({
      ...validEmail({ from: 'l@lister.example', subject: `list ${i}` }),
      scheduled_at: inMs(ms),
    });
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
      id: sent,
      from: 'l@lister.example',
      to: ['rcpt@example.net'],
      subject: 'list 99',
      scheduled_at: expect.any(String),
      status: 'sent',
      created_at: expect.any(String),
      attempts: 1,
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
