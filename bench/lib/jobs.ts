import type { BenchChild } from './children.js';
import type { CpuUsage } from './cpu.js';
import { percentiles, type Percentiles } from './load.js';
import { heapAfterGc, vmRssKiB, type HeapSample } from './memory.js';
import { EMAIL_REQUEST } from './payload.js';
import type { Row } from './report.js';
import type { ServiceHandle, ServiceProcess } from './service.js';

/**
 * The figures of scheduled sends and batch jobs, over the service's REST API, with arrivals taken at the
 * sink (bench/children/sink.ts tracks every message whose Subject starts with `[bench `, by subject):
 *
 * - batch latency: POST /emails/batch with 100 emails → the last of the 100 at the sink, run after run;
 * - scheduled lateness: N emails scheduled for the same whole second → each one's arrival minus that second;
 * - worker memory: the worker process's RSS idle, then with N scheduled emails pending far in the future.
 */
export interface JobsContext {
  sink: BenchChild<{ url: string }>;
  log: (msg: string) => void;
  window: () => { stop(): CpuUsage };
  addRow: (row: Row) => void;
  /** Milliseconds left in the bench's time budget. */
  remaining: () => number;
  /**
   * When each scheduled email with a subject starting with `prefix` fired (the service's own record, read
   * from its database; undefined when that cannot be read): splits lateness into firing and delivery.
   */
  firedAt?: (prefix: string) => Promise<Map<string, number> | undefined>;
}

interface Arrivals {
  distinct: number;
  total: number;
  firstAt: number | null;
  lastAt: number | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ceilSecond = (ms: number) => Math.ceil(ms / 1000) * 1000;
/** KiB (what /proc reports) to MB (10^6 bytes, the unit of the target), one decimal. */
const mb = (kib: number) => Math.round((kib * 1024) / 100_000) / 10;

/** One API call with the account's key; answers the status, the parsed body and how long it took. */
async function call<T>(service: ServiceHandle, method: string, pathname: string, body?: unknown): Promise<{ status: number; body: T | undefined; ms: number; error?: string }> {
  const t0 = performance.now();
  try {
    const res = await fetch(`${service.baseUrl}/v1/mail${pathname}`, {
      method,
      headers: { authorization: `Bearer ${service.apiKey}`, 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    let parsed: T | undefined;
    try {
      parsed = JSON.parse(text) as T;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, body: parsed, ms: performance.now() - t0, ...(res.ok ? {} : { error: text.slice(0, 300) }) };
  } catch (err) {
    return { status: 0, body: undefined, ms: performance.now() - t0, error: (err as Error).message };
  }
}

const email = (subject: string) => ({ ...EMAIL_REQUEST, subject });

/** Runs fn(0..n-1) with `concurrency` calls in flight; stops starting new ones at `deadline` (performance.now()). */
async function inFlight(n: number, concurrency: number, fn: (i: number) => Promise<void>, deadline = Infinity): Promise<number> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async () => {
      while (next < n && performance.now() < deadline) await fn(next++);
    }),
  );
  return Math.min(next, n);
}

interface Creation {
  /** Subjects of the scheduled emails the API accepted (200). */
  created: string[];
  statuses: Record<string, number>;
  firstError?: string;
  elapsedS: number;
  perSec: number;
  latencyMs: Percentiles;
  /** Accepted after their own scheduled_at had passed (would fire late through no fault of the firing). */
  createdAfterDue: number;
}

/**
 * Schedules `n` emails for `dueAt` (one time, or the i-th email's), subjects `${prefix} <i>`,
 * `concurrency` requests in flight.
 */
async function scheduleMany(
  service: ServiceHandle, prefix: string, n: number, dueAt: number | ((i: number) => number), concurrency: number, deadline = Infinity,
): Promise<Creation> {
  const due = typeof dueAt === 'number' ? () => dueAt : dueAt;
  const created: string[] = [];
  const statuses: Record<string, number> = {};
  const latencies: number[] = [];
  let firstError: string | undefined;
  let createdAfterDue = 0;
  const t0 = performance.now();
  await inFlight(n, concurrency, async (i) => {
    const subject = `${prefix} ${i}`;
    const at = due(i);
    const r = await call<{ id: string }>(service, 'POST', '/emails/schedule', { ...email(subject), scheduled_at: new Date(at).toISOString() });
    statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    if (r.status === 200) {
      created.push(subject);
      latencies.push(r.ms);
      if (Date.now() >= at) createdAfterDue += 1;
    } else firstError ??= `${r.status} ${r.error ?? ''}`;
  }, deadline);
  const elapsedS = (performance.now() - t0) / 1000;
  return {
    created, statuses, ...(firstError ? { firstError } : {}), elapsedS: Math.round(elapsedS * 100) / 100,
    perSec: Math.round(created.length / elapsedS), latencyMs: percentiles(latencies), createdAfterDue,
  };
}

const refusedNote = (statuses: Record<string, number>, firstError?: string): string[] => {
  const refused = Object.entries(statuses).filter(([s]) => s !== '200').map(([s, n]) => `${n} x ${s === '0' ? 'connection error' : s}`);
  return refused.length > 0 ? [`non-200 answers: ${refused.join(', ')}; first: ${firstError}`] : [];
};

// ---- 1. Batch latency ----------------------------------------------------------------------------------------

export interface BatchLatencyResult {
  runs: number;
  complete: number;
  lastMs: Percentiles;
}

let tagSeq = 0;
const tag = (kind: string) => `${kind}${(++tagSeq).toString(36)}`;

/** One batch of `size`: POST → every message at the sink; then waits for the job to be completed. */
async function oneBatch(ctx: JobsContext, service: ServiceHandle, size: number, timeoutMs: number) {
  const prefix = `[bench ${tag('b')}]`;
  const body = { emails: Array.from({ length: size }, (_, i) => email(`${prefix} ${i}`)) };
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
    jobId: r.body.job_id, acceptMs, arrived: a.distinct, duplicates: a.total - a.distinct, jobStatus: status,
    firstMs: a.firstAt !== null ? a.firstAt - sentAt : NaN,
    lastMs: a.distinct >= size && a.lastAt !== null ? a.lastAt - sentAt : NaN,
  };
}

export async function batchLatency(ctx: JobsContext, service: ServiceHandle, runs: number, size = 100): Promise<BatchLatencyResult> {
  for (let i = 0; i < 2; i += 1) await oneBatch(ctx, service, size, 15_000);
  const results: Awaited<ReturnType<typeof oneBatch>>[] = [];
  const w = ctx.window();
  for (let i = 0; i < runs; i += 1) {
    if (ctx.remaining() < 10_000) break;
    results.push(await oneBatch(ctx, service, size, 10_000));
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
  if (complete.length < results.length) notes.push(`${results.length - complete.length} runs did not deliver all ${size} within 10 s (left out of p50/p99)`);
  const dups = results.reduce((n, r) => n + r.duplicates, 0);
  if (dups > 0) notes.push(`${dups} messages arrived more than once`);
  const notCompleted = results.filter((r) => r.jobStatus !== 'completed');
  if (notCompleted.length > 0) notes.push(`${notCompleted.length} jobs not 'completed' 5 s after their last message (${notCompleted.map((r) => r.jobStatus || '?').join(', ')})`);
  ctx.addRow({
    key: 'batch-latency', what: `service: batch of ${size}, POST -> last message at sink`, value: results.length, unit: 'batches',
    p50: lastMs.p50, p99: lastMs.p99, cpu, notes, cpuUnits: { count: results.length, per: `batch of ${size} (whole runs, idle gaps included)` },
    detail: { size, runs: results },
  });
  return { runs: results.length, complete: complete.length, lastMs };
}

// ---- 2. Scheduled lateness -----------------------------------------------------------------------------------

export interface LatenessResult {
  asked: number;
  created: number;
  arrived: number;
  exactlyOnce: number;
  duplicates: number;
  early: number;
  lateMs: Percentiles;
  creationPerSec: number;
}

const CONCURRENCY = 32;

export async function scheduledLateness(ctx: JobsContext, service: ServiceHandle, n: number): Promise<LatenessResult> {
  // Warm-up (not counted): 100 scheduled a few seconds ahead, which also gives the creation rate to plan by.
  const warmPrefix = `[bench ${tag('sw')}]`;
  const warmDue = ceilSecond(Date.now() + 5_000);
  const warm = await scheduleMany(service, warmPrefix, 100, warmDue, CONCURRENCY);
  const warmArrived = await ctx.sink.request<Arrivals>('waitFor', { prefix: warmPrefix, count: warm.created.length, timeoutMs: 20_000 });
  const warmNote = warmArrived.distinct === 0 || warmArrived.lastAt === null
    ? `${warmArrived.distinct} of ${warm.created.length} arrived within 20 s of their due time`
    : `${warmArrived.distinct} of ${warm.created.length} arrived, the last ${warmArrived.lastAt - warmDue} ms after their due time`;
  ctx.log(`scheduled warm-up: ${warm.created.length} created at ${warm.perSec}/s; ${warmNote}`);

  // Due time: all of them created first (the warm-up's rate, with a margin), then 8 s of quiet.
  const estimateMs = (n / Math.max(10, warm.perSec)) * 1000;
  const dueAt = ceilSecond(Date.now() + estimateMs * 1.3 + 8_000);
  const prefix = `[bench ${tag('s')}]`;
  ctx.log(`scheduling ${n} emails for ${new Date(dueAt).toISOString()} (creation estimate ${(estimateMs / 1000).toFixed(1)} s)`);
  let w = ctx.window();
  const c = await scheduleMany(service, prefix, n, dueAt, CONCURRENCY);
  const creationCpu = w.stop();
  ctx.addRow({
    key: 'scheduled-create', what: `service: POST /emails/schedule, ${CONCURRENCY} in flight`, value: c.perSec, unit: 'created/s',
    p50: c.latencyMs.p50, p99: c.latencyMs.p99, cpu: creationCpu,
    notes: [`${c.created.length} of ${n} created in ${c.elapsedS} s, all due at the same second`, ...refusedNote(c.statuses, c.firstError)],
    detail: { ...c, created: c.created.length },
  });

  // Firing: CPU from just before the due second to the last arrival.
  await sleep(Math.max(0, dueAt - 500 - Date.now()));
  w = ctx.window();
  const waitCapMs = Math.max(5_000, Math.min(60_000, dueAt - Date.now() + 45_000, ctx.remaining() - 20_000));
  const a = await ctx.sink.request<Arrivals>('waitFor', { prefix, count: c.created.length, timeoutMs: waitCapMs });
  const firingCpu = w.stop();
  const list = await ctx.sink.request<[string, number[]][]>('arrivals', { prefix });
  const lateness = list.map(([, times]) => times[0]! - dueAt);
  const late = percentiles(lateness);
  const early = lateness.filter((l) => l < 0).length;
  const createdSet = new Set(c.created);
  const exactlyOnce = list.filter(([s, times]) => times.length === 1 && createdSet.has(s)).length;
  const duplicates = list.filter(([, times]) => times.length > 1).length;
  const result: LatenessResult = {
    asked: n, created: c.created.length, arrived: a.distinct, exactlyOnce, duplicates, early, lateMs: late, creationPerSec: c.perSec,
  };
  const notes = [
    `${c.created.length} scheduled for ${new Date(dueAt).toISOString()}; ${a.distinct} arrived, ${exactlyOnce} exactly once, ${duplicates} more than once, ${early} early`,
    lateness.length > 0
      ? `lateness (arrival at sink - scheduled_at): min ${Math.min(...lateness)} ms, p50 ${late.p50}, p90 ${late.p90}, p99 ${late.p99}, max ${late.max} ms`
      : 'lateness: none arrived',
  ];
  const fired = await ctx.firedAt?.(prefix).catch((err: Error) => {
    ctx.log(`scheduled lateness: no split into firing and delivery, the service's database could not be read: ${err.message}`);
    return undefined;
  });
  if (fired && fired.size > 0 && list.some(([s]) => fired.has(s))) {
    const firingMs = [...fired.values()].map((t) => t - dueAt);
    const deliveryMs = list.filter(([s]) => fired.has(s)).map(([s, times]) => times[0]! - fired.get(s)!);
    const firing = percentiles(firingMs);
    const delivery = percentiles(deliveryMs);
    notes.push(
      `of which firing (the service's own sent_at - scheduled_at: Temporal's timer, the workflow task, the firing statement): ` +
        `min ${Math.min(...firingMs)}, p50 ${firing.p50}, p99 ${firing.p99}, max ${firing.max} ms; ` +
        `delivery (arrival - sent_at: queue, dispatcher, delivery workflow, SMTP): min ${Math.min(...deliveryMs)}, p50 ${delivery.p50}, p99 ${delivery.p99}, max ${delivery.max} ms`,
    );
  }
  notes.push(`warm-up (not counted): 100 scheduled for one second ~5 s ahead; ${warmNote}`);
  if (c.createdAfterDue > 0) notes.push(`${c.createdAfterDue} were still being created at the due time: the margin was too short`);
  if (a.distinct < c.created.length) notes.push(`${c.created.length - a.distinct} had not arrived ${(waitCapMs / 1000).toFixed(0)} s after the due time`);
  const arrivedTimes = list.map(([, t]) => t[0]!);
  if (arrivedTimes.length > 0) {
    const spanS = (Math.max(...arrivedTimes) - Math.min(...arrivedTimes)) / 1000;
    notes.push(`all arrivals within ${spanS.toFixed(2)} s (${spanS > 0 ? Math.round(arrivedTimes.length / spanS) : arrivedTimes.length} mails/s while firing)`);
  }
  ctx.addRow({
    key: 'scheduled-lateness', what: `service: ${c.created.length} scheduled for one second, lateness at sink`, value: a.distinct, unit: 'arrived',
    p50: late.p50, p99: late.p99, cpu: firingCpu, notes, cpuUnits: { count: a.distinct, per: 'scheduled email fired and delivered' },
    detail: { dueAt: new Date(dueAt).toISOString(), ...result, lateness: late, waitCapMs },
  });
  return result;
}

// ---- 3. Worker memory with scheduled emails pending -----------------------------------------------------------

export interface MemoryResult {
  asked: number;
  pending: number;
  idleRssKiB: number;
  loadedRssKiB: number;
  deltaMB: number;
  creationPerSec: number;
  creationS: number;
  cutShort: boolean;
}

/**
 * A process's settled memory: `quietMs` of waiting first, then a full GC of its main thread (the probe),
 * then VmRSS every 2 s until four samples in a row (6 s) are within 1 MiB (at most `maxMs` in all);
 * answers their median. The wait matters: V8 shrinks the heap that a burst of work grew (its young
 * generation above all) only in a GC that sees the allocation rate low, so a GC right after the burst
 * frees the garbage but keeps tens of MiB committed that a GC a while later gives back.
 */
async function settledMemory(pid: number, memoryFile: string, quietMs: number, maxMs: number) {
  const t0 = performance.now();
  const before: number[] = [];
  while (performance.now() - t0 < quietMs) {
    await sleep(2_000);
    before.push(await vmRssKiB(pid));
  }
  const heap = await heapAfterGc(pid, memoryFile);
  const samples: number[] = [];
  const stable = () => {
    const last = samples.slice(-4);
    return last.length === 4 && Math.max(...last) - Math.min(...last) <= 1024;
  };
  while (!stable() && performance.now() - t0 < maxMs) {
    await sleep(2_000);
    samples.push(await vmRssKiB(pid));
  }
  return { rssKiB: median(samples.slice(-4)), before, samples, heap, settled: stable(), waitedS: Math.round((performance.now() - t0) / 1000) };
}
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;

/**
 * `api` and `worker` run the service split (MAILER_ROLE=api / worker), so that the worker's memory is its
 * own: the scheduled emails' workflows are started by the API process, and the worker should hold nothing
 * for the ones that are not due yet. Both have bench/children/memory-probe.mjs preloaded (`memoryFiles`).
 */
export async function workerMemory(
  ctx: JobsContext, api: ServiceHandle, worker: ServiceProcess, n: number, memoryFiles: { api: string; worker: string }, creationDeadline: () => number,
): Promise<MemoryResult> {
  // Warm-up, small so that it leaves little garbage: every path of the worker once (a batch, direct sends
  // through the dispatcher, scheduled emails firing).
  const warm = `[bench ${tag('mw')}]`;
  const warmDue = ceilSecond(Date.now() + 3_000);
  const [, direct, scheduled] = await Promise.all([
    oneBatch(ctx, api, 20, 15_000),
    inFlight(20, 8, async (i) => {
      await call(api, 'POST', '/emails', email(`${warm}d ${i}`));
    }),
    scheduleMany(api, `${warm}s`, 20, warmDue, 8),
  ]);
  await ctx.sink.request<Arrivals>('waitFor', { prefix: `${warm}d`, count: direct, timeoutMs: 15_000 });
  await ctx.sink.request<Arrivals>('waitFor', { prefix: `${warm}s`, count: scheduled.created.length, timeoutMs: 15_000 });

  const sample = async (label: string, minMs: number, maxMs: number) => {
    const [w, a] = await Promise.all([settledMemory(worker.pid, memoryFiles.worker, minMs, maxMs), settledMemory(api.pid, memoryFiles.api, minMs, maxMs)]);
    ctx.log(
      `worker memory ${label}: VmRSS ${w.before.length > 0 ? `every 2 s ${w.before.map(mb).join(', ')} MB, ` : ''}after a full GC ${w.samples.map(mb).join(', ')} MB${w.settled ? '' : ' (not settled)'}, ` +
        `main-thread JS heap used ${w.heap ? mb(w.heap.heapUsed / 1024) : '?'} MB; API process ${mb(a.rssKiB)} MB, heap ${a.heap ? mb(a.heap.heapUsed / 1024) : '?'} MB`,
    );
    return { worker: w, api: a };
  };
  // Idle: 20 s of quiet after the warm-up before the GC (the worker is as quiet, and longer, while the
  // scheduled emails are created, before the second measurement).
  const idle = await sample('idle', 20_000, 36_000);

  // N scheduled emails due over the hour from an hour ahead (as many distinct seconds as the hour has, a
  // few emails each), created as fast as the API takes them; the worker's VmRSS sampled every 2 s meanwhile.
  const from = ceilSecond(Date.now() + 3_600_000);
  const dueAt = (i: number) => from + Math.floor((i * 3_600) / n) * 1000;
  const prefix = `[bench ${tag('m')}]`;
  const during: { atS: number; rssKiB: number }[] = [];
  const t0 = performance.now();
  let creating = true;
  const sampler = (async () => {
    while (creating) {
      await sleep(2_000);
      during.push({ atS: Math.round((performance.now() - t0) / 100) / 10, rssKiB: await vmRssKiB(worker.pid).catch(() => NaN) });
    }
  })();
  const w = ctx.window();
  const c = await scheduleMany(api, prefix, n, dueAt, CONCURRENCY, creationDeadline());
  const cpu = w.stop();
  creating = false;
  await sampler;
  const cutShort = c.created.length < n;
  ctx.addRow({
    key: 'memory-create', what: `service (split): POST /emails/schedule, ${CONCURRENCY} in flight`, value: c.perSec, unit: 'created/s',
    p50: c.latencyMs.p50, p99: c.latencyMs.p99, cpu,
    notes: [
      `${c.created.length} of ${n} created in ${c.elapsedS} s${cutShort ? ' (stopped by the time budget)' : ''}, due one after the other over ` +
        `${Math.min(c.created.length, Math.ceil((c.created.length * 3_600) / n))} distinct seconds from ${new Date(from).toISOString()}`,
      ...refusedNote(c.statuses, c.firstError),
    ],
    detail: { ...c, created: c.created.length },
  });

  const pendingAnswer = await call<{ total_count?: number }>(api, 'GET', '/emails/scheduled?status=scheduled&limit=1');
  const pending = pendingAnswer.body?.total_count ?? c.created.length;
  const loaded = await sample(`with ${pending} pending`, 0, 16_000);
  const deltaKiB = loaded.worker.rssKiB - idle.worker.rssKiB;
  const heapMb = (h: HeapSample | undefined) => (h ? `${mb(h.heapUsed / 1024)}` : '?');
  const heapDelta = (h: HeapSample | undefined, g: HeapSample | undefined) => (h && g ? `${mb((g.heapUsed - h.heapUsed) / 1024)} MB` : 'unknown');
  const peak = Math.max(...during.map((d) => d.rssKiB).filter((v) => !Number.isNaN(v)), loaded.worker.rssKiB);
  const result: MemoryResult = {
    asked: n, pending, idleRssKiB: idle.worker.rssKiB, loadedRssKiB: loaded.worker.rssKiB, deltaMB: mb(deltaKiB),
    creationPerSec: c.perSec, creationS: c.elapsedS, cutShort,
  };
  ctx.addRow({
    key: 'worker-memory', what: `service worker: VmRSS above idle with ${pending} scheduled pending`, value: mb(deltaKiB), unit: 'MB',
    notes: [
      `worker VmRSS, settled after a full GC (median of the last 4 of samples 2 s apart; idle: GC after 20 s of quiet): ` +
        `idle ${mb(idle.worker.rssKiB)} MB -> ${mb(loaded.worker.rssKiB)} MB with ${pending} pending` +
        `${idle.worker.settled && loaded.worker.settled ? '' : ' (NOT SETTLED: RSS still moving by more than 1 MiB)'}; highest while creating (no forced GC) ${mb(peak)} MB`,
      `worker main-thread JS heap used after GC ${heapMb(idle.worker.heap)} -> ${heapMb(loaded.worker.heap)} MB (${heapDelta(idle.worker.heap, loaded.worker.heap)}); ` +
        'workflow code runs in the SDK\'s own thread, in VmRSS but not in this heap',
      `API process (it took the ${c.created.length} requests and started their workflows): VmRSS ${mb(idle.api.rssKiB)} -> ${mb(loaded.api.rssKiB)} MB, ` +
        `JS heap used ${heapMb(idle.api.heap)} -> ${heapMb(loaded.api.heap)} MB (${heapDelta(idle.api.heap, loaded.api.heap)})`,
      ...(cutShort ? [`ONLY ${c.created.length} of the ${n} asked for fit in the time budget: this is the figure for ${c.created.length}, not extrapolated`] : []),
    ],
    detail: { ...result, idle, loaded, during },
  });
  return result;
}
