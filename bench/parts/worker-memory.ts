import { setTimeout as sleep } from 'node:timers/promises';
import type { JobsContext } from '../lib/context.js';
import { heapAfterGc, vmRssKiB, type HeapSample } from '../lib/memory.js';
import type { ServiceHandle, ServiceProcess } from '../lib/service.js';
import {
  call,
  ceilSecond,
  CONCURRENCY,
  email,
  inFlight,
  refusedNote,
  scheduleMany,
  tag,
  type Arrivals,
  type Creation,
} from './api-calls.js';
import { oneBatch } from './batch-latency.js';

/** Worker memory: the worker process's RSS idle, then with N scheduled emails pending far in the future. */
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

/** KiB (what /proc reports) to MB (10^6 bytes, the unit of the target), one decimal. */
const mb = (kib: number) => Math.round((kib * 1024) / 100_000) / 10;

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
  return {
    rssKiB: median(samples.slice(-4)),
    before,
    samples,
    heap,
    settled: stable(),
    waitedS: Math.round((performance.now() - t0) / 1000),
  };
}
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;

type Settled = Awaited<ReturnType<typeof settledMemory>>;
type Sample = { worker: Settled; api: Settled };
/** What the worker's RSS was every 2 s while the scheduled emails were created (no forced GC). */
type During = { atS: number; rssKiB: number }[];

/**
 * `api` and `worker` run the service split (MAILER_ROLE=api / worker), so that the worker's memory is its
 * own: the scheduled emails' workflows are started by the API process, and the worker should hold nothing
 * for the ones that are not due yet. Both have bench/children/memory-probe.mjs preloaded (`memoryFiles`).
 */
export async function workerMemory(
  ctx: JobsContext,
  api: ServiceHandle,
  worker: ServiceProcess,
  n: number,
  memoryFiles: { api: string; worker: string },
  creationDeadline: () => number,
): Promise<MemoryResult> {
  await warmUp(ctx, api);
  const sample = async (label: string, minMs: number, maxMs: number): Promise<Sample> => {
    const [w, a] = await Promise.all([
      settledMemory(worker.pid, memoryFiles.worker, minMs, maxMs),
      settledMemory(api.pid, memoryFiles.api, minMs, maxMs),
    ]);
    ctx.log(
      `worker memory ${label}: VmRSS ${w.before.length > 0 ? `every 2 s ${w.before.map(mb).join(', ')} MB, ` : ''}after a full GC ${w.samples.map(mb).join(', ')} MB${w.settled ? '' : ' (not settled)'}, ` +
        `main-thread JS heap used ${w.heap ? mb(w.heap.heapUsed / 1024) : '?'} MB; API process ${mb(a.rssKiB)} MB, heap ${a.heap ? mb(a.heap.heapUsed / 1024) : '?'} MB`,
    );
    return { worker: w, api: a };
  };
  // Idle: 20 s of quiet after the warm-up before the GC (the worker is as quiet, and longer, while the
  // scheduled emails are created, before the second measurement).
  const idle = await sample('idle', 20_000, 36_000);
  const { created, during } = await createPending(ctx, api, worker, n, creationDeadline());
  const pendingAnswer = await call<{ total_count?: number }>(api, 'GET', '/emails/scheduled?status=scheduled&limit=1');
  const pending = pendingAnswer.body?.total_count ?? created.created.length;
  const loaded = await sample(`with ${pending} pending`, 0, 16_000);
  const result: MemoryResult = {
    asked: n,
    pending,
    idleRssKiB: idle.worker.rssKiB,
    loadedRssKiB: loaded.worker.rssKiB,
    deltaMB: mb(loaded.worker.rssKiB - idle.worker.rssKiB),
    creationPerSec: created.perSec,
    creationS: created.elapsedS,
    cutShort: created.created.length < n,
  };
  ctx.addRow({
    key: 'worker-memory',
    what: `service worker: VmRSS above idle with ${pending} scheduled pending`,
    value: result.deltaMB,
    unit: 'MB',
    notes: memoryNotes(idle, loaded, during, pending, created.created.length, n),
    detail: { ...result, idle, loaded, during },
  });
  return result;
}

/** Small, so that it leaves little garbage: every path of the worker once (a batch, direct sends through the dispatcher, scheduled emails firing). */
async function warmUp(ctx: JobsContext, api: ServiceHandle): Promise<void> {
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
  await ctx.sink.request<Arrivals>('waitFor', {
    prefix: `${warm}s`,
    count: scheduled.created.length,
    timeoutMs: 15_000,
  });
}

/**
 * N scheduled emails due over the hour from an hour ahead (as many distinct seconds as the hour has, a
 * few emails each), created as fast as the API takes them until `deadline`; the worker's VmRSS sampled
 * every 2 s meanwhile.
 */
async function createPending(
  ctx: JobsContext,
  api: ServiceHandle,
  worker: ServiceProcess,
  n: number,
  deadline: number,
): Promise<{ created: Creation; during: During }> {
  const from = ceilSecond(Date.now() + 3_600_000);
  const dueAt = (i: number) => from + Math.floor((i * 3_600) / n) * 1000;
  const prefix = `[bench ${tag('m')}]`;
  const during: During = [];
  const t0 = performance.now();
  let creating = true;
  const sampler = (async () => {
    while (creating) {
      await sleep(2_000);
      // A process that cannot be read at one moment is a gap in the series (NaN, left out of the peak), not the end of the figure.
      during.push({
        atS: Math.round((performance.now() - t0) / 100) / 10,
        rssKiB: await vmRssKiB(worker.pid).catch(() => NaN),
      });
    }
  })();
  const w = ctx.window();
  const c = await scheduleMany(api, prefix, n, dueAt, CONCURRENCY, deadline);
  const cpu = w.stop();
  creating = false;
  await sampler;
  ctx.addRow({
    key: 'memory-create',
    what: `service (split): POST /emails/schedule, ${CONCURRENCY} in flight`,
    value: c.perSec,
    unit: 'created/s',
    p50: c.latencyMs.p50,
    p99: c.latencyMs.p99,
    cpu,
    notes: [
      `${c.created.length} of ${n} created in ${c.elapsedS} s${c.created.length < n ? ' (stopped by the time budget)' : ''}, due one after the other over ` +
        `${Math.min(c.created.length, Math.ceil((c.created.length * 3_600) / n))} distinct seconds from ${new Date(from).toISOString()}`,
      ...refusedNote(c.statuses, c.firstError),
    ],
    detail: { ...c, created: c.created.length },
  });
  return { created: c, during };
}

function memoryNotes(
  idle: Sample,
  loaded: Sample,
  during: During,
  pending: number,
  created: number,
  asked: number,
): string[] {
  const heapMb = (h: HeapSample | undefined) => (h ? `${mb(h.heapUsed / 1024)}` : '?');
  const heapDelta = (h: HeapSample | undefined, g: HeapSample | undefined) =>
    h && g ? `${mb((g.heapUsed - h.heapUsed) / 1024)} MB` : 'unknown';
  const peak = Math.max(...during.map((d) => d.rssKiB).filter((v) => !Number.isNaN(v)), loaded.worker.rssKiB);
  return [
    `worker VmRSS, settled after a full GC (median of the last 4 of samples 2 s apart; idle: GC after 20 s of quiet): ` +
      `idle ${mb(idle.worker.rssKiB)} MB -> ${mb(loaded.worker.rssKiB)} MB with ${pending} pending` +
      `${idle.worker.settled && loaded.worker.settled ? '' : ' (NOT SETTLED: RSS still moving by more than 1 MiB)'}; highest while creating (no forced GC) ${mb(peak)} MB`,
    `worker main-thread JS heap used after GC ${heapMb(idle.worker.heap)} -> ${heapMb(loaded.worker.heap)} MB (${heapDelta(idle.worker.heap, loaded.worker.heap)}); ` +
      "workflow code runs in the SDK's own thread, in VmRSS but not in this heap",
    `API process (it took the ${created} requests and started their workflows): VmRSS ${mb(idle.api.rssKiB)} -> ${mb(loaded.api.rssKiB)} MB, ` +
      `JS heap used ${heapMb(idle.api.heap)} -> ${heapMb(loaded.api.heap)} MB (${heapDelta(idle.api.heap, loaded.api.heap)})`,
    ...(created < asked
      ? [
          `ONLY ${created} of the ${asked} asked for fit in the time budget: this is the figure for ${created}, not extrapolated`,
        ]
      : []),
  ];
}
