import { setTimeout as sleep } from 'node:timers/promises';
import type { JobsContext } from '../lib/context.js';
import { percentiles, type Percentiles } from '../lib/load.js';
import type { ServiceHandle } from '../lib/service.js';
import { ceilSecond, CONCURRENCY, refusedNote, scheduleMany, tag, type Arrivals } from './api-calls.js';

/** Scheduled lateness: N emails scheduled for the same whole second -> each one's arrival minus that second. */
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

export async function scheduledLateness(ctx: JobsContext, service: ServiceHandle, n: number): Promise<LatenessResult> {
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

  // Due time: all of them created first (the warm-up's rate, with a margin), then 8 s of quiet.
  const estimateMs = (n / Math.max(10, warm.perSec)) * 1000;
  const dueAt = ceilSecond(Date.now() + estimateMs * 1.3 + 8_000);
  const prefix = `[bench ${tag('s')}]`;
  ctx.log(
    `scheduling ${n} emails for ${new Date(dueAt).toISOString()} (creation estimate ${(estimateMs / 1000).toFixed(1)} s)`,
  );
  let w = ctx.window();
  const c = await scheduleMany(service, prefix, n, dueAt, CONCURRENCY);
  const creationCpu = w.stop();
  ctx.addRow({
    key: 'scheduled-create',
    what: `service: POST /emails/schedule, ${CONCURRENCY} in flight`,
    value: c.perSec,
    unit: 'created/s',
    p50: c.latencyMs.p50,
    p99: c.latencyMs.p99,
    cpu: creationCpu,
    notes: [
      `${c.created.length} of ${n} created in ${c.elapsedS} s, all due at the same second`,
      ...refusedNote(c.statuses, c.firstError),
    ],
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
    asked: n,
    created: c.created.length,
    arrived: a.distinct,
    exactlyOnce,
    duplicates,
    early,
    lateMs: late,
    creationPerSec: c.perSec,
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
    key: 'scheduled-lateness',
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
