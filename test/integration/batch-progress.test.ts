import { describe, expect, it } from 'vitest';
import { batchItems as items, type BatchJob, useBatchStack } from '../helpers/batch-api.js';
import { call, eventually } from '../helpers/http.js';
import { ISO_MS as ISO, sleep } from '../helpers/time.js';

/**
 * Batch jobs against the real service: PostgreSQL, Temporal and a receiving SMTP server that refuses
 * recipients at @refused.example permanently (550 5.1.1).
 */

const { stack, sendBatch, sendBatchOk, getJob, finished, emailsOfJob, arrivedWithTag } = useBatchStack();

/**
 * A slow receiving server for the `progress` messages, which also stops answering after the `gate`th of them until
 * the returned function opens it.
 */
function slowSinkHeldAfter(gate: number): () => void {
  let arrived = 0;
  let openGate!: () => void;
  const opened = new Promise<void>((resolve) => {
    openGate = resolve;
  });
  stack.sink.beforeAccept = async (raw) => {
    if (!/^subject: progress /im.test(raw.toString('latin1'))) return;
    arrived += 1;
    if (arrived > gate) await opened;
    await sleep(20);
  };
  return openGate;
}

/** Polled states of a job of `N` emails: counters and status never go backwards; completed_at only once completed. */
function expectNeverBackwards(seen: BatchJob[], N: number): void {
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
}

describe('GET /emails/batch/:id while the job runs', () => {
  it('counters move and never go backwards; completed_at is absent until the end, which is exact', async () => {
    const N = 100;
    const GATE = 40;
    const tag = 'progress';
    const openGate = slowSinkHeldAfter(GATE);

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
    const halfway = await eventually(
      async () => {
        const last = seen[seen.length - 1];
        return last && last.sent_count === GATE ? last : undefined;
      },
      30_000,
      10,
    );
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
      job_id: jobId,
      total_count: N,
      sent_count: N,
      failed_count: 0,
      status: 'completed',
      created_at: expect.stringMatching(ISO),
      completed_at: expect.stringMatching(ISO),
    });

    expectNeverBackwards(seen, N);
    const distinct = new Set(seen.map((s) => s.sent_count));
    expect(distinct.size).toBeGreaterThan(3);
    console.info(
      `batch progress: ${seen.length} polls, ${distinct.size} distinct sent_count values, ` +
        `statuses ${[...new Set(seen.map((s) => s.status))].join(' -> ')}`,
    );

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
    const jobId = await sendBatchOk(
      stack.apiKey,
      items(10, 'partial', (i) => (refused.has(i) ? { to: [`nobody${i}@refused.example`] } : {})),
    );
    const done = await finished(jobId);
    expect(done).toMatchObject({
      total_count: 10,
      sent_count: 7,
      failed_count: 3,
      status: 'completed',
      completed_at: expect.stringMatching(ISO),
    });

    const listed = await emailsOfJob(jobId);
    expect(listed.total).toBe(10);
    for (const e of listed.data) {
      const i = Number(e.subject.split(' ')[1]);
      expect(e.status, e.subject).toBe(refused.has(i) ? 'bounced' : 'delivered');
    }
    await sleep(300);
    expect(
      arrivedWithTag('partial')
        .map((m) => m.parsed.subject)
        .sort(),
    ).toEqual([0, 1, 3, 4, 6, 7, 8].map((i) => `partial ${i}`).sort());
  });

  it('a batch where every email is refused ends failed, with completed_at', async () => {
    const jobId = await sendBatchOk(
      stack.apiKey,
      items(4, 'all refused', (i) => ({ to: [`gone${i}@refused.example`] })),
    );
    const done = await finished(jobId);
    expect(done).toEqual({
      job_id: jobId,
      total_count: 4,
      sent_count: 0,
      failed_count: 4,
      status: 'failed',
      created_at: expect.stringMatching(ISO),
      completed_at: expect.stringMatching(ISO),
    });
    const listed = await emailsOfJob(jobId);
    expect(listed.data.map((e) => e.status)).toEqual(['bounced', 'bounced', 'bounced', 'bounced']);
    const bouncedFilter = await call<{ total: number }>('GET', `${stack.api}/emails?job_id=${jobId}&status=bounced`, {
      token: stack.apiKey,
    });
    expect(bouncedFilter.body.total).toBe(4);
    expect(arrivedWithTag('all refused')).toHaveLength(0);
  });
});
