import { describe, expect, it } from 'vitest';
import { admin, createKey, createSender } from '../helpers/admin-fixtures.js';
import { batchItems as items, useBatchStack } from '../helpers/batch-api.js';
import { call, expectValidationError, validEmail } from '../helpers/http.js';
import { ISO_MS as ISO, nextUtcMidnight, sleep } from '../helpers/time.js';
import { returnPathPattern } from '../helpers/return-path.js';

/**
 * Batch jobs against the real service: PostgreSQL, Temporal and a receiving SMTP server that refuses
 * recipients at @refused.example permanently (550 5.1.1).
 */

const { stack, sendBatch, sendBatchOk, getJob, listJobs, finished, emailsOfJob, arrivedWithTag } = useBatchStack();

describe('POST /emails/batch', () => {
  it('answers {job_id: "bat_...", status: "pending", total_count}; every item keeps its own cc, bcc, reply_to, attachments, headers and tags', async () => {
    const emails = [
      validEmail({
        to: ['one@example.net'],
        cc: ['one-cc@example.net'],
        bcc: ['one-bcc@example.net'],
        reply_to: ['one-reply@example.com'],
        subject: 'full 0',
        html: '<p>first <b>one</b></p>',
        headers: { 'X-Item': 'zero' },
        tags: { item: '0' },
        attachments: [
          { filename: 'a.txt', content: Buffer.from('first file').toString('base64'), content_type: 'text/plain' },
        ],
      }),
      validEmail({
        from: 'Other <other@example.com>',
        to: ['two@example.net', 'two-b@example.net'],
        reply_to: ['two-reply@example.com'],
        subject: 'full 1',
        text: 'second one',
        headers: { 'X-Item': 'one', 'X-Extra': 'more' },
        tags: { item: '1', kind: 'b' },
        attachments: [
          { filename: 'b.csv', content: Buffer.from('x,y\n1,2\n').toString('base64'), content_type: 'text/csv' },
          { filename: 'c.bin', content: Buffer.from([0, 1, 2, 255]).toString('base64') },
        ],
      }),
      validEmail({ to: ['three@example.net'], bcc: ['three-bcc@example.net'], subject: 'full 2' }),
    ];
    const res = await sendBatch(stack.apiKey, { emails });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      job_id: expect.stringMatching(/^bat_[0-9a-z]{26}$/),
      status: 'pending',
      total_count: 3,
    });
    const jobId = res.body.job_id as string;

    const done = await finished(jobId);
    expect(done).toEqual({
      job_id: jobId,
      total_count: 3,
      sent_count: 3,
      failed_count: 0,
      status: 'completed',
      created_at: expect.stringMatching(ISO),
      completed_at: expect.stringMatching(ISO),
    });
    expect(Date.parse(done.completed_at!)).toBeGreaterThanOrEqual(Date.parse(done.created_at));

    // A copy per recipient: 3 + 2 + 2 in all; each email's copies are one message under envelopes of their own.
    const msgs = arrivedWithTag('full');
    expect(msgs).toHaveLength(7);
    // An email's copy to its first recipient (its return path names recipient 0), with every copy's envelope recipients.
    const joined = (subject: string, first: string) => {
      const copies = msgs.filter((x) => x.parsed.subject === subject);
      return { ...copies.find((x) => x.envelopeTo[0] === first)!, envelopeTo: copies.flatMap((x) => x.envelopeTo) };
    };
    const m0 = joined('full 0', 'one@example.net');
    expect(m0.envelopeFrom).toMatch(returnPathPattern(/em_[0-9a-z]{26}/, 'example.com'));
    expect(m0.envelopeTo.sort()).toEqual(['one-bcc@example.net', 'one-cc@example.net', 'one@example.net']);
    expect(m0.raw.toString()).not.toContain('one-bcc@example.net');
    expect(m0.parsed.replyTo?.text).toBe('one-reply@example.com');
    expect(m0.parsed.html).toContain('<b>one</b>');
    expect(m0.parsed.headers.get('x-item')).toBe('zero');
    expect(m0.parsed.attachments.map((a) => [a.filename, a.content.toString()])).toEqual([['a.txt', 'first file']]);
    const m1 = joined('full 1', 'two@example.net');
    expect(m1.envelopeFrom).toMatch(returnPathPattern(/em_[0-9a-z]{26}/, 'example.com'));
    expect(m1.envelopeTo.sort()).toEqual(['two-b@example.net', 'two@example.net']);
    expect(m1.parsed.replyTo?.text).toBe('two-reply@example.com');
    expect(m1.parsed.text?.trim()).toBe('second one');
    expect(m1.parsed.headers.get('x-item')).toBe('one');
    expect(m1.parsed.headers.get('x-extra')).toBe('more');
    expect(m1.parsed.headers.has('x-item-zero')).toBe(false);
    expect(m1.parsed.attachments.map((a) => [a.filename, a.contentType, a.content.toString('hex')])).toEqual([
      ['b.csv', 'text/csv', Buffer.from('x,y\n1,2\n').toString('hex')],
      ['c.bin', 'application/octet-stream', '000102ff'],
    ]);
    const m2 = joined('full 2', 'three@example.net');
    expect(m2.envelopeTo.sort()).toEqual(['three-bcc@example.net', 'three@example.net']);
    expect(m2.parsed.attachments).toHaveLength(0);
    expect(m2.parsed.headers.has('x-item')).toBe(false);

    // Stored as batch emails of this job, each with its own fields.
    const listed = await emailsOfJob(jobId);
    expect(listed.total).toBe(3);
    for (const e of listed.data) {
      const detail = await call('GET', `${stack.api}/emails/${e.id}`, { token: stack.apiKey });
      expect(detail.body).toMatchObject({
        job_type: 'batch',
        job_id: jobId,
        status: 'delivered',
        message_id: expect.stringMatching(/^<em_/),
      });
      expect(msgs.filter((m) => m.parsed.subject === detail.body.subject).map((m) => m.messageId)).toContain(
        detail.body.message_id,
      );
      if (detail.body.subject === 'full 1') {
        expect(detail.body).toMatchObject({
          tags: { item: '1', kind: 'b' },
          headers: { 'X-Item': 'one', 'X-Extra': 'more' },
          reply_to: ['two-reply@example.com'],
        });
      }
      if (detail.body.subject === 'full 0') {
        expect(detail.body).toMatchObject({
          tags: { item: '0' },
          cc: ['one-cc@example.net'],
          bcc: ['one-bcc@example.net'],
        });
      }
    }
    const filtered = await call<{ total: number }>('GET', `${stack.api}/emails?job_type=batch&job_id=${jobId}`, {
      token: stack.apiKey,
    });
    expect(filtered.body.total).toBe(3);
    const direct = await call<{ total: number }>('GET', `${stack.api}/emails?job_type=direct&job_id=${jobId}`, {
      token: stack.apiKey,
    });
    expect(direct.body.total).toBe(0);
  });
});

describe('POST /emails/batch', () => {
  it('0 or 101 emails, a missing list, or one bad item is 400 naming emails[i].field; nothing is stored or sent', async () => {
    const jobsBefore = (await listJobs('')).body.total_count;
    const emailsBefore = (await call<{ total: number }>('GET', `${stack.api}/emails`, { token: stack.apiKey })).body
      .total;
    const sinkBefore = stack.sink.messages.length;

    const cases: [string, unknown, RegExp][] = [
      ['no emails', { emails: [] }, /emails/],
      ['no list', {}, /emails/],
      ['101 emails', { emails: items(101, 'too many') }, /101.*100/],
      [
        'emails[3] without a subject',
        { emails: items(5, 'bad', (i) => (i === 3 ? { subject: '' } : {})) },
        /emails\[3\]\.subject/,
      ],
      [
        'emails[4] with a 999-character subject',
        { emails: items(5, 'bad', (i) => (i === 4 ? { subject: 'x'.repeat(999) } : {})) },
        /emails\[4\]\.subject.*999.*998/,
      ],
      [
        'emails[1] with a bad recipient',
        { emails: items(3, 'bad', (i) => (i === 1 ? { to: ['nope'] } : {})) },
        /emails\[1\]\.to\[0\]/,
      ],
      [
        'emails[2] with a reserved header',
        { emails: items(3, 'bad', (i) => (i === 2 ? { headers: { From: 'x@example.com' } } : {})) },
        /emails\[2\]\.headers/,
      ],
      [
        'emails[0] with 11 attachments',
        {
          emails: items(2, 'bad', (i) =>
            i === 0
              ? { attachments: Array.from({ length: 11 }, (_, k) => ({ filename: `f${k}.txt`, content: 'eA==' })) }
              : {},
          ),
        },
        /emails\[0\]\.attachments.*11.*10/,
      ],
      [
        'emails[1] with 51 recipients',
        {
          emails: items(2, 'bad', (i) =>
            i === 1 ? { to: Array.from({ length: 51 }, (_, k) => `r${k}@example.net`) } : {},
          ),
        },
        /emails\[1\]\.to.*51.*50/,
      ],
    ];
    for (const [what, body, message] of cases) {
      expectValidationError(await sendBatch(stack.apiKey, body), what, message);
    }
    expect((await listJobs('')).body.total_count).toBe(jobsBefore);
    expect((await call<{ total: number }>('GET', `${stack.api}/emails`, { token: stack.apiKey })).body.total).toBe(
      emailsBefore,
    );
    await sleep(300);
    expect(stack.sink.messages.length).toBe(sinkBefore);
  });

  it('a read_only key is 403; one item from an unverified domain makes the whole batch 403; send_only may send', async () => {
    const jobsBefore = (await listJobs('')).body.total_count;
    const reader = await createKey(stack, stack.accountId, 'read_only');
    const r1 = await sendBatch(reader.key, { emails: items(2, 'ro') });
    expect(r1.status).toBe(403);
    expect(r1.body.error).toBe('permission denied');

    const r2 = await sendBatch(stack.apiKey, {
      emails: items(3, 'unverified', (i) => (i === 2 ? { from: 'x@not-verified.example' } : {})),
    });
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

    const jobId = await sendBatchOk(
      s.key,
      items(5, 'quota five', () => from),
    );
    expect((await finished(jobId, s.key)).sent_count).toBe(5);
    expect(arrivedWithTag('quota six')).toHaveLength(0);
    expect(arrivedWithTag('quota five')).toHaveLength(5);
    expect((await admin<{ sent_today: number }>(stack, 'GET', `/accounts/${s.accountId}`)).body.sent_today).toBe(5);

    const full = await sendBatch(s.key, { emails: items(1, 'quota one', () => from) });
    expect(full.status).toBe(429);
    expect(full.body.error).toMatch(/^daily quota exceeded \(5\/5\), resets at /);
  });
});

describe('POST /emails/batch', () => {
  it('an Idempotency-Key answers the first job again and sends each email once; another body with the key is 400', async () => {
    const jobsBefore = (await listJobs('')).body.total_count;
    const body = { emails: items(3, 'idem batch') };
    const first = await sendBatch(stack.apiKey, body, { 'idempotency-key': 'batch-idem-1' });
    expect(first.status).toBe(200);
    const again = await sendBatch(stack.apiKey, body, { 'idempotency-key': 'batch-idem-1' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const other = await sendBatch(
      stack.apiKey,
      { emails: items(2, 'idem other') },
      { 'idempotency-key': 'batch-idem-1' },
    );
    expect(other.status).toBe(400);

    await finished(first.body.job_id as string);
    expect((await listJobs('')).body.total_count).toBe(jobsBefore + 1);
    await sleep(500);
    expect(arrivedWithTag('idem batch')).toHaveLength(3);
    expect(arrivedWithTag('idem other')).toHaveLength(0);
  });
});
