import postgres from 'postgres';
import type { JobsContext } from '../lib/context.js';
import type { CpuUsage } from '../lib/cpu.js';
import { percentiles, type Percentiles } from '../lib/load.js';
import type { Hook } from '../lib/webhook-recorder.js';
import { okHooks, type WebhookLoad, type WebhookSetup } from './webhook-load.js';

/**
 * Event -> receiver latency under send load, and one acknowledged webhook per delivered email: for every
 * `delivery` webhook request, its arrival at the recorder minus the event's own time (the body's
 * `timestamp`, which is the event's `events.created_at`).
 */
export interface LatencyFigures {
  /** Of the accepted emails, how many reached the sink. */
  delivered: number;
  /** `delivery` webhook requests that arrived for the latency account (all answered 200). */
  requests: number;
  latencyMs: Percentiles;
  /** Delivered emails with exactly one acknowledged delivery webhook, more than one, none. */
  exactlyOnce: number;
  duplicates: number;
  missing: number;
  badSignatures: number;
}

export const ms = (v: number) => (Number.isNaN(v) ? '-' : String(Math.round(v)));
const pctLine = (values: number[]) => {
  if (values.length === 0) return 'none';
  const p = percentiles(values);
  return `min ${ms(Math.min(...values))}, p50 ${ms(p.p50)}, p99 ${ms(p.p99)}, max ${ms(p.max)} ms`;
};

export async function webhookLatency(
  ctx: JobsContext & { databaseUrl: string },
  setup: WebhookSetup,
  load: WebhookLoad,
  run: { rate: number; durationS: number; cpu: CpuUsage; waitedS: number; complete: boolean; waitCap: number },
): Promise<LatencyFigures> {
  const { rate, durationS, cpu } = run;
  const { accepted, sent } = load;
  const hooks = okHooks(setup).filter((h) => h.event === 'delivery' && h.subject.startsWith(setup.prefix));
  const latencies = hooks.map((h) => h.arrivedAt - h.eventAt);
  const latencyMs = percentiles(latencies);
  const atSink = new Map(await ctx.sink.request<[string, number[]][]>('arrivals', { prefix: setup.prefix }));
  const counts = countAcknowledged(hooks, atSink);
  const { exactlyOnce, duplicates, missing, sameDeliveryAgain, acked } = counts;
  const notDelivered = accepted.filter((s) => !atSink.has(s.subject)).length;
  const hookedNotAtSink = [...acked.keys()].filter((s) => !atSink.has(s)).length;
  const badSignatures = setup.recorder.hooks.slice(setup.counted).filter((h) => !h.signatureOk).length;
  // By the second of the load its event fell in: a latency that grows second after second is a queue.
  const perSecond: number[][] = [];
  for (const h of hooks)
    (perSecond[Math.max(0, Math.floor((h.eventAt - load.startedAt) / 1000))] ??= []).push(h.arrivedAt - h.eventAt);
  const toSink = accepted.filter((s) => atSink.has(s.subject)).map((s) => atSink.get(s.subject)![0]! - s.sentAt);
  const sinkToReceiver = hooks
    .filter((h) => atSink.has(h.subject))
    .map((h) => h.arrivedAt - atSink.get(h.subject)![0]!);
  const split = await latencySplit(ctx.databaseUrl, setup.ok.webhookId, hooks);

  const statuses = new Map<number, number>();
  for (const s of sent) statuses.set(s.status, (statuses.get(s.status) ?? 0) + 1);
  const refused = [...statuses]
    .filter(([s]) => s !== 200)
    .map(([s, n]) => `${n} x ${s === 0 ? 'connection error' : s}`);
  const sendLatency = percentiles(accepted.map((s) => s.ms));
  const notes = [
    `load: ${accepted.length} of ${sent.length} sends accepted at ${rate}/s for ${durationS} s (accept p50 ${sendLatency.p50.toFixed(1)} ms, p99 ${sendLatency.p99.toFixed(1)} ms)` +
      (refused.length > 0
        ? `; non-200: ${refused.join(', ')}; first: ${sent.find((s) => s.status !== 200)?.error}`
        : ''),
    `event -> receiver (arrival Date.now() - body timestamp) over ${latencies.length} delivery webhooks: ${pctLine(latencies)}`,
    `p50 by second of the event (s 1, 2, ...): ${Array.from(perSecond, (v) => (v ? ms(percentiles(v).p50) : '-')).join(' ')} ms`,
    `the emails themselves, POST -> at the SMTP sink: ${pctLine(toSink)}`,
    `sink -> receiver (the SMTP sink's arrival of the email to its delivery webhook, bench clocks only): ${pctLine(sinkToReceiver)}`,
    ...split,
    `${atSink.size} of ${accepted.length} accepted delivered to the sink; of those ${exactlyOnce} with exactly one acknowledged delivery webhook, ` +
      `${duplicates} with more than one (${sameDeliveryAgain} of them the same delivery id again), ${missing} with none` +
      (notDelivered > 0 ? `; ${notDelivered} accepted but not at the sink` : '') +
      (hookedNotAtSink > 0 ? `; ${hookedNotAtSink} webhooks for emails not at the sink` : ''),
    `CPU columns: from the first send to the last webhook (${load.seconds.toFixed(1)} s of sends + ${run.waitedS.toFixed(1)} s)`,
    `waited ${run.waitedS.toFixed(1)} s after the load for the last webhooks and discards` +
      (run.complete ? '' : ` (cut short by the ${(run.waitCap / 1000).toFixed(0)} s cap)`),
  ];
  if (badSignatures > 0) notes.push(`${badSignatures} webhook requests with a signature that does not verify`);
  if (setup.recorder.unreadable() > 0)
    notes.push(`${setup.recorder.unreadable()} webhook requests whose body was not JSON`);
  ctx.addRow({
    key: 'webhook-latency',
    what: `webhooks: event -> receiver, sends at ${rate}/s`,
    value: latencies.length,
    unit: 'webhooks',
    p50: latencyMs.p50,
    p99: latencyMs.p99,
    cpu,
    notes,
    cpuUnits: {
      count: accepted.length,
      per: 'email sent, delivered and webhooked (from the first send to the last webhook)',
    },
    detail: {
      rate,
      durationS,
      accepted: accepted.length,
      delivered: atSink.size,
      latencyMs,
      exactlyOnce,
      duplicates,
      missing,
      sameDeliveryAgain,
      badSignatures,
    },
  });
  return { delivered: atSink.size, requests: hooks.length, latencyMs, exactlyOnce, duplicates, missing, badSignatures };
}

/** Per email at the sink: how many acknowledged (2xx) delivery webhooks it had. */
function countAcknowledged(hooks: Hook[], atSink: Map<string, number[]>) {
  const acked = new Map<string, Hook[]>();
  for (const h of hooks)
    if (h.status >= 200 && h.status < 300) acked.set(h.subject, [...(acked.get(h.subject) ?? []), h]);
  let exactlyOnce = 0;
  let duplicates = 0;
  let missing = 0;
  let sameDeliveryAgain = 0;
  for (const subject of atSink.keys()) {
    const n = acked.get(subject)?.length ?? 0;
    if (n === 1) exactlyOnce += 1;
    else if (n > 1) {
      duplicates += 1;
      if (new Set(acked.get(subject)!.map((h) => h.deliveryId)).size < n) sameDeliveryAgain += 1;
    } else missing += 1;
  }
  return { acked, exactlyOnce, duplicates, missing, sameDeliveryAgain };
}

/**
 * Where the time goes, from the service's own records (read-only): the event's time, the claim of its
 * delivery by the dispatcher (the database's clock), the first attempt's start (the service's clock).
 */
async function latencySplit(databaseUrl: string, webhookId: string, hooks: Hook[]): Promise<string[]> {
  const db = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const rows = await db<
      { id: string; event_at: Date; claimed_at: Date | null; group_id: string | null; started_at: Date | null }[]
    >`
      select d.id, e.created_at as event_at, d.claimed_at, d.group_id, a.started_at
      from webhook_deliveries d join events e on e.id = d.event_id
      left join webhook_attempts a on a.delivery_id = d.id and a.attempt = 1
      where d.webhook_id = ${webhookId} and e.type = 'delivery'`;
    const arrival = new Map(hooks.map((h) => [h.deliveryId, h.arrivedAt]));
    const measured = rows.filter((r) => arrival.has(r.id) && r.claimed_at && r.started_at);
    const toClaim = measured.map((r) => r.claimed_at!.getTime() - r.event_at.getTime());
    const toStart = measured.map((r) => r.started_at!.getTime() - r.claimed_at!.getTime());
    const toArrive = measured.map((r) => arrival.get(r.id)! - r.started_at!.getTime());
    const groups = new Set(measured.map((r) => r.group_id)).size;
    return [
      `split over ${measured.length} deliveries: event -> claimed by the dispatcher (commit, NOTIFY, dispatcher gap, claim): ${pctLine(toClaim)}`,
      `claimed -> first attempt starts (workflow start, workflow task, activity task, loading the delivery): ${pctLine(toStart)}`,
      `attempt starts -> request at receiver (new TCP connection, POST): ${pctLine(toArrive)}`,
      `${groups} webhook workflows for ${measured.length} deliveries (${groups > 0 ? (measured.length / groups).toFixed(1) : '-'} per workflow)`,
    ];
  } catch (err) {
    return [`(no split: the service's database could not be read: ${(err as Error).message})`];
  } finally {
    await db.end();
  }
}
