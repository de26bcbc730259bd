import { setTimeout as sleep } from 'node:timers/promises';
import type { JobsContext } from '../lib/context.js';
import { percentiles, type Percentiles } from '../lib/load.js';
import type { ServiceHandle } from '../lib/service.js';
import { call, email, tag, type Arrivals } from './api-calls.js';

/** Batch latency: POST /emails/batch with 100 emails -> the last of the 100 at the sink, run after run. */
export interface BatchLatencyResult {
  runs: number;
  complete: number;
  lastMs: Percentiles;
}

/**
 * What a batch figure sends and how its row is named: each item made from the subject prefix the sink tracks
 * and its index (the item's subject must start with `${prefix} ${i}`); by default the bench email itself.
 */
export interface BatchShape {
  key: string;
  what: (size: number) => string;
  item: (prefix: string, i: number) => unknown;
}

const PLAIN_BATCH: BatchShape = {
  key: 'batch-latency',
  what: (size) => `service: batch of ${size}, POST -> last message at sink`,
  item: (prefix, i) => email(`${prefix} ${i}`),
};

/** One batch of `size`: POST → every message at the sink; then waits for the job to be completed. */
export async function oneBatch(
  ctx: JobsContext,
  service: ServiceHandle,
  size: number,
  timeoutMs: number,
  item: BatchShape['item'] = PLAIN_BATCH.item,
) {
  const prefix = `[bench ${tag('b')}]`;
  const body = { emails: Array.from({ length: size }, (_, i) => item(prefix, i)) };
  const sentAt = Date.now();
  const r = await call<{ job_id: string }>(service, 'POST', '/emails/batch', body);
  const acceptMs = Date.now() - sentAt;
  if (r.status !== 200 || !r.body?.job_id) throw new Error(`POST /emails/batch: ${r.status} ${r.error ?? ''}`);
  const a = await ctx.sink.request<Arrivals>('waitFor', { prefix, count: size, timeoutMs });
  // The job's end (its workflow marks it completed after the last outcome): the next run starts on a quiet service.
  const jobDeadline = performance.now() + 5_000;
  let status = '';
  while (performance.now() < jobDeadline) {
    status = (await call<{ status: string }>(service, 'GET', `/emails/batch/${r.body.job_id}`)).body?.status ?? '';
    if (status === 'completed' || status === 'failed') break;
    await sleep(50);
  }
  return {
    jobId: r.body.job_id,
    acceptMs,
    arrived: a.distinct,
    duplicates: a.total - a.distinct,
    jobStatus: status,
    firstMs: a.firstAt !== null ? a.firstAt - sentAt : NaN,
    lastMs: a.distinct >= size && a.lastAt !== null ? a.lastAt - sentAt : NaN,
  };
}

export async function batchLatency(
  ctx: JobsContext,
  service: ServiceHandle,
  runs: number,
  size = 100,
  shape: BatchShape = PLAIN_BATCH,
): Promise<BatchLatencyResult> {
  for (let i = 0; i < 2; i += 1) await oneBatch(ctx, service, size, 15_000, shape.item);
  const results: Awaited<ReturnType<typeof oneBatch>>[] = [];
  const w = ctx.window();
  for (let i = 0; i < runs; i += 1) {
    if (ctx.remaining() < 10_000) break;
    results.push(await oneBatch(ctx, service, size, 10_000, shape.item));
    await sleep(200);
  }
  const cpu = w.stop();
  const complete = results.filter((r) => !Number.isNaN(r.lastMs));
  const lastMs = percentiles(complete.map((r) => r.lastMs));
  const notes = [
    `${results.length} batches of ${size}, one at a time (200 ms apart, each after its job completed); p99 of ${results.length} runs is the slowest run`,
    `POST answered: p50 ${percentiles(results.map((r) => r.acceptMs)).p50} ms; first message at sink: p50 ${percentiles(results.map((r) => r.firstMs)).p50} ms; ` +
      `last: max ${lastMs.max} ms, runs in ms: ${results.map((r) => (Number.isNaN(r.lastMs) ? 'incomplete' : Math.round(r.lastMs))).join(' ')}`,
  ];
  if (complete.length < results.length)
    notes.push(
      `${results.length - complete.length} runs did not deliver all ${size} within 10 s (left out of p50/p99)`,
    );
  const dups = results.reduce((n, r) => n + r.duplicates, 0);
  if (dups > 0) notes.push(`${dups} messages arrived more than once`);
  const notCompleted = results.filter((r) => r.jobStatus !== 'completed');
  if (notCompleted.length > 0)
    notes.push(
      `${notCompleted.length} jobs not 'completed' 5 s after their last message (${notCompleted.map((r) => r.jobStatus || '?').join(', ')})`,
    );
  ctx.addRow({
    key: shape.key,
    what: shape.what(size),
    value: results.length,
    unit: 'batches',
    p50: lastMs.p50,
    p99: lastMs.p99,
    cpu,
    notes,
    cpuUnits: { count: results.length, per: `batch of ${size} (whole runs, idle gaps included)` },
    detail: { size, runs: results },
  });
  return { runs: results.length, complete: complete.length, lastMs };
}
