import { describe, expect, it } from 'vitest';
import { createKey, createSender } from '../helpers/admin-fixtures.js';
import { batchItems as items, useBatchStack } from '../helpers/batch-api.js';
import { eventually } from '../helpers/http.js';
import { ISO_MS as ISO } from '../helpers/time.js';

/**
 * Batch jobs against the real service: PostgreSQL, Temporal and a receiving SMTP server that refuses
 * recipients at @refused.example permanently (550 5.1.1).
 */

const { stack, sendBatchOk, getJob, listJobs, finished, emailsOfJob } = useBatchStack();

describe('GET /emails/batch', () => {
  it('answers {batch_jobs, total_count}, newest first, with page and limit and the status filter', async () => {
    const s = await createSender(stack, 'batch lister', 'batch-lister.example');
    const from = () => ({ from: 'l@batch-lister.example' });
    const completed: string[] = [];
    for (let i = 0; i < 21; i++) completed.push(await sendBatchOk(s.key, items(1, `lister ${i}`, from)));
    const failedJob = await sendBatchOk(
      s.key,
      items(2, 'lister failing', (i) => ({ ...from(), to: [`x${i}@refused.example`] })),
    );
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
      job_id: running,
      total_count: 1,
      sent_count: 0,
      failed_count: 0,
      status: 'processing',
      created_at: expect.stringMatching(ISO),
    });
    expect(all.body.batch_jobs[1]).toMatchObject({
      job_id: failedJob,
      status: 'failed',
      failed_count: 2,
      completed_at: expect.stringMatching(ISO),
    });
    expect((await listJobs('?page=2', s.key)).body.batch_jobs.map((j) => j.job_id)).toEqual(newestFirst.slice(20));
    expect((await listJobs('?page=3&limit=4', s.key)).body.batch_jobs.map((j) => j.job_id)).toEqual(
      newestFirst.slice(8, 12),
    );
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

  it("an unknown job and another account's job are 404 with the contract body", async () => {
    const unknown = 'bat_00000000000000000000000000';
    const res = await getJob(unknown);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not found', message: `batch job ${unknown} not found` });

    const other = await createSender(stack, 'other batcher', 'other-batch.example');
    const theirs = await sendBatchOk(
      other.key,
      items(1, 'theirs', () => ({ from: 'o@other-batch.example' })),
    );
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
