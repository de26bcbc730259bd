import { setTimeout as sleep } from 'node:timers/promises';
import type { JobsContext } from '../lib/context.js';
import { percentiles, type Percentiles } from '../lib/load.js';
import type { ServiceHandle } from '../lib/service.js';
import { ceilSecond, CONCURRENCY, refusedNote, scheduleMany, tag, type Arrivals } from './api-calls.js';
import { signedNodemailerBurst, type BurstBaseline } from './baselines.js';

/**
 * Scheduled lateness: N emails scheduled for the same whole second -> each one's arrival minus that second,
 * held against what raw DKIM-signed nodemailer takes to deliver as many (`raw`, measured just before).
 */
export interface LatenessResult {
  asked: number;
  created: number;
  arrived: number;
  exactlyOnce: number;
  duplicates: number;
  early: number;
  lateMs: Percentiles;
  creationPerSec: number;
  /** The raw signed nodemailer time for as many messages (bench/parts/baselines.ts, signedNodemailerBurst). */
  raw: BurstBaseline;
  /** From the end of the creation to the due second (the service builds the messages from 5 s before it). */
  quietMs: number;
  /** Why the burst was not run (the time budget): every target of it is then NOT MET. */
  skipped?: string;
}

/** A burst is planned so that every email is created this long before its second, with the creation estimated 1.3 x. */
const QUIET_MS = 8_000;
const CREATION_MARGIN = 1.3;
/** The service builds a second's messages from this long before it (src/temporal/client.ts, PREPARE_LEAD_MS). */
const PREPARE_LEAD_MS = 5_000;
/** After the due second, arrivals are waited for at most this long. */
const ARRIVAL_WAIT_MS = 45_000;

/**
 * The scheduled bursts (bench/README.md, "Scheduled lateness"): a warm-up, then for each of `counts` (1,000 and
 * 10,000 by default), one after the other: raw signed nodemailer's time for as many, then the burst.
 */
export async function scheduledBursts(
  ctx: JobsContext,
  service: ServiceHandle,
  counts: number[],
): Promise<LatenessResult[]> {
  // Warm-up (not counted): 100 scheduled a few seconds ahead, which also gives the creation rate to plan by.
  const warmPrefix = `[bench ${tag('sw')}]`;
  const warmDue = ceilSecond(Date.now() + 5_000);
  const warm = await scheduleMany(service, warmPrefix, 100, warmDue, CONCURRENCY);
  const warmArrived = await ctx.sink.request<Arrivals>('waitFor', {
    prefix: warmPrefix,
    count: warm.created.length,
    timeoutMs: 20_000,
  });
  const warmNote =
    warmArrived.distinct === 0 || warmArrived.lastAt === null
      ? `${warmArrived.distinct} of ${warm.created.length} arrived within 20 s of their due time`
      : `${warmArrived.distinct} of ${warm.created.length} arrived, the last ${warmArrived.lastAt - warmDue} ms after their due time`;
  ctx.log(`scheduled warm-up: ${warm.created.length} created at ${warm.perSec}/s; ${warmNote}`);
  const results: LatenessResult[] = [];
  // Each burst is planned by the last creation rate seen: a burst's own 1,000 say more about the next than 100 do.
  let rate = warm.perSec;
  for (const [k, n] of counts.entries()) {
    const r = await burst(ctx, service, n, { rate, key: k === 0 ? '' : '-large', warmNote });
    results.push(r);
    if (r.creationPerSec > 0) rate = r.creationPerSec;
    // The last bookkeeping of the burst (its events, the queue) before the next one's baseline.
    await sleep(1_000);
  }
  return results;
}

/** What one burst takes at most, planned: its raw baseline, the creation at `rate` with its margin, the quiet, the wait. */
const plannedMs = (n: number, rate: number) =>
  5_000 + n + CREATION_MARGIN * ((n / Math.max(10, rate)) * 1000) + QUIET_MS + ARRIVAL_WAIT_MS;

async function burst(
  ctx: JobsContext,
  service: ServiceHandle,
  n: number,
  { rate, key, warmNote }: { rate: number; key: string; warmNote: string },
): Promise<LatenessResult> {
  const need = plannedMs(n, rate);
  if (ctx.remaining() < need) {
    const skipped = `not run: ${(ctx.remaining() / 1000).toFixed(0)} s left in the budget, ${(need / 1000).toFixed(0)} s planned at ${rate} created/s`;
    ctx.log(`scheduled burst of ${n}: ${skipped}`);
    const none = percentiles([]);
    return {
      asked: n,
      created: 0,
      arrived: 0,
      exactlyOnce: 0,
      duplicates: 0,
      early: 0,
      lateMs: none,
      creationPerSec: 0,
      raw: { count: n, sent: 0, failed: 0, arrived: 0, ms: NaN },
      quietMs: NaN,
      skipped,
    };
  }
  const raw = await signedNodemailerBurst(ctx, n);
  ctx.log(
    `raw signed nodemailer, ${n} messages: ${Number.isNaN(raw.ms) ? `only ${raw.arrived} arrived` : `${raw.ms} ms to the last at the sink`}`,
  );

  // Due time: all of them created first (the last creation rate, with a margin), then 8 s of quiet.
  const estimateMs = (n / Math.max(10, rate)) * 1000;
  const dueAt = ceilSecond(Date.now() + estimateMs * CREATION_MARGIN + QUIET_MS);
  const prefix = `[bench ${tag('s')}]`;
  ctx.log(
    `scheduling ${n} emails for ${new Date(dueAt).toISOString()} (creation estimate ${(estimateMs / 1000).toFixed(1)} s at ${rate}/s)`,
  );
  let w = ctx.window();
  const c = await scheduleMany(service, prefix, n, dueAt, CONCURRENCY);
  const creationCpu = w.stop();
  const quietMs = dueAt - Date.now();
  ctx.addRow({
    key: `scheduled-create${key}`,
    what: `service: POST /emails/schedule, ${CONCURRENCY} in flight`,
    value: c.perSec,
    unit: 'created/s',
    p50: c.latencyMs.p50,
    p99: c.latencyMs.p99,
    cpu: creationCpu,
    notes: [
      `${c.created.length} of ${n} created in ${c.elapsedS} s, all due at the same second, the last ${(quietMs / 1000).toFixed(1)} s before it` +
        (quietMs < PREPARE_LEAD_MS
          ? ` (less than the ${PREPARE_LEAD_MS / 1000} s in which the service builds them ahead)`
          : ''),
      ...refusedNote(c.statuses, c.firstError),
    ],
    detail: { ...c, created: c.created.length },
  });

  // Firing: CPU from just before the due second to the last arrival.
  await sleep(Math.max(0, dueAt - 500 - Date.now()));
  w = ctx.window();
  const waitCapMs = Math.max(5_000, Math.min(60_000, dueAt - Date.now() + ARRIVAL_WAIT_MS, ctx.remaining() - 20_000));
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
    asked: n,
    created: c.created.length,
    arrived: a.distinct,
    exactlyOnce,
    duplicates,
    early,
    lateMs: late,
    creationPerSec: c.perSec,
    raw,
    quietMs,
  };
  const notes = [
    `${c.created.length} scheduled for ${new Date(dueAt).toISOString()}; ${a.distinct} arrived, ${exactlyOnce} exactly once, ${duplicates} more than once, ${early} early`,
    lateness.length > 0
      ? `lateness (arrival at sink - scheduled_at): min ${Math.min(...lateness)} ms, p50 ${late.p50}, p90 ${late.p90}, p99 ${late.p99}, max ${late.max} ms`
      : 'lateness: none arrived',
  ];
  const fired = await ctx.firedAt?.(prefix).catch((err: Error) => {
    ctx.log(
      `scheduled lateness: no split into firing and delivery, the service's database could not be read: ${err.message}`,
    );
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
  notes.push(
    Number.isNaN(raw.ms)
      ? `raw signed nodemailer, ${n} messages: only ${raw.arrived} arrived, no figure to hold the lateness against`
      : `raw signed nodemailer sends as many in ${raw.ms} ms (first send -> last at sink): p99 / that = ${(late.p99 / raw.ms).toFixed(2)}`,
  );
  notes.push(`warm-up (not counted): 100 scheduled for one second ~5 s ahead; ${warmNote}`);
  if (c.createdAfterDue > 0)
    notes.push(`${c.createdAfterDue} were still being created at the due time: the margin was too short`);
  if (a.distinct < c.created.length)
    notes.push(
      `${c.created.length - a.distinct} had not arrived ${(waitCapMs / 1000).toFixed(0)} s after the due time`,
    );
  const arrivedTimes = list.map(([, t]) => t[0]!);
  if (arrivedTimes.length > 0) {
    const spanS = (Math.max(...arrivedTimes) - Math.min(...arrivedTimes)) / 1000;
    notes.push(
      `all arrivals within ${spanS.toFixed(2)} s (${spanS > 0 ? Math.round(arrivedTimes.length / spanS) : arrivedTimes.length} mails/s while firing)`,
    );
  }
  ctx.addRow({
    key: `scheduled-lateness${key}`,
    what: `service: ${c.created.length} scheduled for one second, lateness at sink`,
    value: a.distinct,
    unit: 'arrived',
    p50: late.p50,
    p99: late.p99,
    cpu: firingCpu,
    notes,
    cpuUnits: { count: a.distinct, per: 'scheduled email fired and delivered' },
    detail: { dueAt: new Date(dueAt).toISOString(), ...result, lateness: late, waitCapMs },
  });
  return result;
}
