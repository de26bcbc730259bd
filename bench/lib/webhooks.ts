import http from 'node:http';
import type { AddressInfo } from 'node:net';
import postgres from 'postgres';
import { verifyWebhookSignature } from '../../src/webhooks/signature.js';
import type { JobsContext } from './context.js';
import { onCleanup } from './lifecycle.js';
import { percentiles, type Percentiles } from './load.js';
import { EMAIL_REQUEST, SENDER_DOMAIN } from './payload.js';
import { admin, type ServiceHandle } from './service.js';

/**
 * The webhook figures (bench/README.md, "Webhooks"), on the service the other parts use, with a webhook
 * receiver (an HTTP server on loopback) in the bench process:
 *
 * - event -> receiver latency: an account whose webhook is subscribed to `delivery` sends emails at a
 *   fixed rate through the public API; for every webhook request, the receiver's arrival time (Date.now())
 *   minus the event's own time (the body's `timestamp`, which is the event's `events.created_at`);
 * - retry gaps: a second account whose webhook always answers 500 sends a few emails while that load runs;
 *   the gaps between the attempts of each delivery (X-Mail-Delivery-Id) at the receiver, and what the
 *   management API says of each delivery at the end (4 attempts, `discarded`).
 */
export interface WebhooksContext extends JobsContext {
  /** The service's database, read (only) for the split of each delivery's latency. */
  databaseUrl: string;
}

export interface WebhooksResult {
  rate: number;
  durationS: number;
  /** Emails the API accepted on the latency account, and of those how many reached the sink. */
  accepted: number;
  delivered: number;
  /** `delivery` webhook requests that arrived for the latency account (all answered 200). */
  requests: number;
  latencyMs: Percentiles;
  /** Delivered emails with exactly one acknowledged delivery webhook, more than one, none. */
  exactlyOnce: number;
  duplicates: number;
  missing: number;
  badSignatures: number;
  retry: {
    emails: number;
    deliveries: number;
    /** Per gap (1st -> 2nd attempt, 2nd -> 3rd, 3rd -> 4th): its figures over the deliveries that had it. */
    gaps: { wantMs: number; count: number; min: number; p50: number; max: number; within: number }[];
    /** Deliveries with exactly 4 attempts at the receiver and `discarded` with 4 attempts (all 500) in the management API. */
    fourThenDiscarded: number;
    detail: { id: string; arrivals: number[]; apiStatus: string | undefined; apiAttempts: number[] }[];
  };
}

/** The retry policy under test (workflows/deliver-webhooks.ts): gaps of 1 s, 2 s, 4 s, 4 attempts. */
export const RETRY_GAPS_MS = [1000, 2000, 4000];
/** How late a retry may come (gap above its interval) and still count. */
export const RETRY_TOLERANCE_MS = 500;
const RETRY_EMAILS = 5;

interface Hook {
  path: string;
  deliveryId: string;
  event: string;
  subject: string;
  /** The event's own time (body `timestamp`), ms since the epoch. */
  eventAt: number;
  /** Date.now() when the request's headers had arrived. */
  arrivedAt: number;
  status: number;
  signatureOk: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let runSeq = 0;

/** The webhook endpoint: `/ok` answers 200, `/fail` answers 500; every request is kept with its arrival time. */
async function startReceiver(secrets: Map<string, string>) {
  const hooks: Hook[] = [];
  let unreadable = 0;
  const server = http.createServer((req, res) => {
    const arrivedAt = Date.now();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      const status = path === '/fail' ? 500 : 200;
      const rawBody = Buffer.concat(chunks);
      try {
        const body = JSON.parse(rawBody.toString('utf8')) as { event: string; timestamp: string; email?: { subject?: string } };
        const secret = secrets.get(path);
        hooks.push({
          path, deliveryId: String(req.headers['x-mail-delivery-id'] ?? ''), event: body.event, subject: body.email?.subject ?? '',
          eventAt: Date.parse(body.timestamp), arrivedAt, status,
          signatureOk: secret !== undefined && verifyWebhookSignature({ secret, headers: req.headers, rawBody }).ok,
        });
      } catch {
        unreadable += 1;
      }
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'bench: always 500');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const close = onCleanup('stop the webhook receiver', async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hooks, unreadable: () => unreadable, close };
}

/** An account of its own (unlimited quota, the bench's verified sender domain, a key) with a webhook. */
async function accountWithWebhook(service: ServiceHandle, name: string, url: string, events: string[]) {
  const account = await admin<{ id: string }>(service, 'POST', '/accounts', { name });
  await admin(service, 'PATCH', `/accounts/${account.id}`, { daily_quota: 100_000_000 });
  const d = await admin<{ id: string }>(service, 'POST', `/accounts/${account.id}/domains`, { name: SENDER_DOMAIN });
  await admin(service, 'POST', `/domains/${d.id}/verify`, { force: true });
  const key = await admin<{ key: string }>(service, 'POST', `/accounts/${account.id}/api-keys`, { name: 'bench', permission: 'all' });
  const hook = await admin<{ id: string; secret: string }>(service, 'POST', `/accounts/${account.id}/webhooks`, { url, events });
  return { accountId: account.id, apiKey: key.key, webhookId: hook.id, secret: hook.secret };
}

interface Sent {
  subject: string;
  /** Date.now() just before the request. */
  sentAt: number;
  status: number;
  ms: number;
  error?: string;
}

async function sendOne(service: ServiceHandle, apiKey: string, subject: string): Promise<Sent> {
  const t0 = performance.now();
  const sentAt = Date.now();
  try {
    const res = await fetch(`${service.baseUrl}/v1/mail/emails`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...EMAIL_REQUEST, subject }),
    });
    const text = await res.text();
    return { subject, sentAt, status: res.status, ms: performance.now() - t0, ...(res.ok ? {} : { error: text.slice(0, 300) }) };
  } catch (err) {
    return { subject, sentAt, status: 0, ms: performance.now() - t0, error: (err as Error).message };
  }
}

/**
 * Open-loop sends at `rate` per second for `durationMs`: the i-th request goes at start + i / rate whether
 * the earlier ones have been answered or not (so a slow answer does not lower the rate).
 */
async function paced(rate: number, durationMs: number, fire: (i: number) => Promise<Sent>): Promise<Sent[]> {
  const n = Math.max(1, Math.round((rate * durationMs) / 1000));
  const t0 = performance.now();
  const all: Promise<Sent>[] = [];
  for (let i = 0; i < n; i += 1) {
    const wait = t0 + (i * 1000) / rate - performance.now();
    if (wait >= 1) await sleep(wait);
    all.push(fire(i));
  }
  return Promise.all(all);
}

type Deliveries = { deliveries: { id: string; status: string; attempts: { attempt: number; status_code: number }[] }[] };

const ms = (v: number) => (Number.isNaN(v) ? '-' : String(Math.round(v)));
const pctLine = (values: number[]) => {
  if (values.length === 0) return 'none';
  const p = percentiles(values);
  return `min ${ms(Math.min(...values))}, p50 ${ms(p.p50)}, p99 ${ms(p.p99)}, max ${ms(p.max)} ms`;
};

/**
 * `rate` sends a second for `durationS` on the latency account, then waits at most `waitCapMs` for the
 * last webhooks and for the failing deliveries to be discarded.
 */
export async function webhookFigures(ctx: WebhooksContext, service: ServiceHandle, rate: number, durationS: number, waitCapMs: number): Promise<WebhooksResult> {
  const secrets = new Map<string, string>();
  const receiver = await startReceiver(secrets);
  const run = (++runSeq).toString(36);
  const ok = await accountWithWebhook(service, `bench webhooks ${run}`, `${receiver.url}/ok`, ['delivery']);
  const fail = await accountWithWebhook(service, `bench webhook retries ${run}`, `${receiver.url}/fail`, ['delivery']);
  secrets.set('/ok', ok.secret);
  secrets.set('/fail', fail.secret);
  const prefix = `[bench wh${run}]`;
  const failPrefix = `[bench whf${run}]`;

  // Warm-up (not counted): the first webhook POSTs, the webhook workflow's code in the worker's cache.
  await Promise.all(Array.from({ length: 10 }, (_, i) => sendOne(service, ok.apiKey, `[bench whw${run}] ${i}`)));
  const warmDeadline = performance.now() + 10_000;
  while (receiver.hooks.filter((h) => h.subject.startsWith(`[bench whw${run}]`)).length < 10 && performance.now() < warmDeadline) await sleep(50);
  await sleep(300);
  const counted = receiver.hooks.length;

  // The load, and the always-failing account's few emails early in it (all 4 attempts, 7 s, fall inside it).
  ctx.log(`webhooks: ${rate}/s sends for ${durationS} s on an account with a delivery webhook; ${RETRY_EMAILS} emails to an always-500 webhook`);
  const w = ctx.window();
  const loadStartedAt = Date.now();
  const failSends = Promise.all(
    Array.from({ length: RETRY_EMAILS }, (_, i) => sleep(500 + i * 300).then(() => sendOne(service, fail.apiKey, `${failPrefix} ${i}`))),
  );
  const sent = await paced(rate, durationS * 1000, (i) => sendOne(service, ok.apiKey, `${prefix} ${i}`));
  const failSent = await failSends;
  const loadS = (Date.now() - loadStartedAt) / 1000;
  const accepted = sent.filter((s) => s.status === 200);
  const failAccepted = failSent.filter((s) => s.status === 200).length;

  // Until every accepted email has its webhook and every failing delivery is discarded (or the cap).
  const okHooks = () => receiver.hooks.slice(counted).filter((h) => h.path === '/ok');
  const acceptedSubjects = new Set(accepted.map((s) => s.subject));
  const waitCap = Math.max(3_000, waitCapMs);
  const waitStart = performance.now();
  let complete: boolean;
  for (;;) {
    const got = new Set(okHooks().map((h) => h.subject));
    const allHooked = [...acceptedSubjects].every((s) => got.has(s));
    const discarded = (await admin<Deliveries>(service, 'GET', `/webhooks/${fail.webhookId}/deliveries?status=discarded&limit=100`)).deliveries;
    complete = allHooked && discarded.length >= failAccepted;
    if (complete || performance.now() - waitStart > waitCap) break;
    await sleep(250);
  }
  const waitedS = (performance.now() - waitStart) / 1000;
  // CPU from the first send to the last webhook: everything the load cost, webhooks included.
  const cpu = w.stop();
  // A moment more: anything still coming (a duplicate, a fifth attempt) would be seen.
  await sleep(500);

  // ---- Event -> receiver latency, and one acknowledged webhook per delivered email ------------------------
  const hooks = okHooks().filter((h) => h.event === 'delivery' && h.subject.startsWith(prefix));
  const latencies = hooks.map((h) => h.arrivedAt - h.eventAt);
  const latencyMs = percentiles(latencies);
  const atSink = new Map(await ctx.sink.request<[string, number[]][]>('arrivals', { prefix }));
  const acked = new Map<string, Hook[]>();
  for (const h of hooks) if (h.status >= 200 && h.status < 300) acked.set(h.subject, [...(acked.get(h.subject) ?? []), h]);
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
  const notDelivered = [...acceptedSubjects].filter((s) => !atSink.has(s)).length;
  const hookedNotAtSink = [...acked.keys()].filter((s) => !atSink.has(s)).length;
  const badSignatures = receiver.hooks.slice(counted).filter((h) => !h.signatureOk).length;
  // By the second of the load its event fell in: a latency that grows second after second is a queue.
  const perSecond: number[][] = [];
  for (const h of hooks) (perSecond[Math.max(0, Math.floor((h.eventAt - loadStartedAt) / 1000))] ??= []).push(h.arrivedAt - h.eventAt);
  const toSink = accepted.filter((s) => atSink.has(s.subject)).map((s) => atSink.get(s.subject)![0]! - s.sentAt);
  const sinkToReceiver = hooks.filter((h) => atSink.has(h.subject)).map((h) => h.arrivedAt - atSink.get(h.subject)![0]!);

  // Where the time goes, from the service's own records (read-only): the event's time, the claim of its
  // delivery by the dispatcher (the database's clock), the first attempt's start (the service's clock).
  let split: string[];
  const db = postgres(ctx.databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const rows = await db<{ id: string; event_at: Date; claimed_at: Date | null; group_id: string | null; started_at: Date | null }[]>`
      select d.id, e.created_at as event_at, d.claimed_at, d.group_id, a.started_at
      from webhook_deliveries d join events e on e.id = d.event_id
      left join webhook_attempts a on a.delivery_id = d.id and a.attempt = 1
      where d.webhook_id = ${ok.webhookId} and e.type = 'delivery'`;
    const arrival = new Map(hooks.map((h) => [h.deliveryId, h.arrivedAt]));
    const measured = rows.filter((r) => arrival.has(r.id) && r.claimed_at && r.started_at);
    const toClaim = measured.map((r) => r.claimed_at!.getTime() - r.event_at.getTime());
    const toStart = measured.map((r) => r.started_at!.getTime() - r.claimed_at!.getTime());
    const toArrive = measured.map((r) => arrival.get(r.id)! - r.started_at!.getTime());
    const groups = new Set(measured.map((r) => r.group_id)).size;
    split = [
      `split over ${measured.length} deliveries: event -> claimed by the dispatcher (commit, NOTIFY, dispatcher gap, claim): ${pctLine(toClaim)}`,
      `claimed -> first attempt starts (workflow start, workflow task, activity task, loading the delivery): ${pctLine(toStart)}`,
      `attempt starts -> request at receiver (new TCP connection, POST): ${pctLine(toArrive)}`,
      `${groups} webhook workflows for ${measured.length} deliveries (${groups > 0 ? (measured.length / groups).toFixed(1) : '-'} per workflow)`,
    ];
  } catch (err) {
    split = [`(no split: the service's database could not be read: ${(err as Error).message})`];
  } finally {
    await db.end();
  }

  const statuses = new Map<number, number>();
  for (const s of sent) statuses.set(s.status, (statuses.get(s.status) ?? 0) + 1);
  const refused = [...statuses].filter(([s]) => s !== 200).map(([s, n]) => `${n} x ${s === 0 ? 'connection error' : s}`);
  const sendLatency = percentiles(accepted.map((s) => s.ms));
  const notes = [
    `load: ${accepted.length} of ${sent.length} sends accepted at ${rate}/s for ${durationS} s (accept p50 ${sendLatency.p50.toFixed(1)} ms, p99 ${sendLatency.p99.toFixed(1)} ms)` +
      (refused.length > 0 ? `; non-200: ${refused.join(', ')}; first: ${sent.find((s) => s.status !== 200)?.error}` : ''),
    `event -> receiver (arrival Date.now() - body timestamp) over ${latencies.length} delivery webhooks: ${pctLine(latencies)}`,
    `p50 by second of the event (s 1, 2, ...): ${Array.from(perSecond, (v) => (v ? ms(percentiles(v).p50) : '-')).join(' ')} ms`,
    `the emails themselves, POST -> at the SMTP sink: ${pctLine(toSink)}`,
    `sink -> receiver (the SMTP sink's arrival of the email to its delivery webhook, bench clocks only): ${pctLine(sinkToReceiver)}`,
    ...split,
    `${atSink.size} of ${accepted.length} accepted delivered to the sink; of those ${exactlyOnce} with exactly one acknowledged delivery webhook, ` +
      `${duplicates} with more than one (${sameDeliveryAgain} of them the same delivery id again), ${missing} with none` +
      (notDelivered > 0 ? `; ${notDelivered} accepted but not at the sink` : '') + (hookedNotAtSink > 0 ? `; ${hookedNotAtSink} webhooks for emails not at the sink` : ''),
    `CPU columns: from the first send to the last webhook (${loadS.toFixed(1)} s of sends + ${waitedS.toFixed(1)} s)`,
    `waited ${waitedS.toFixed(1)} s after the load for the last webhooks and discards` + (complete ? '' : ` (cut short by the ${(waitCap / 1000).toFixed(0)} s cap)`),
  ];
  if (badSignatures > 0) notes.push(`${badSignatures} webhook requests with a signature that does not verify`);
  if (receiver.unreadable() > 0) notes.push(`${receiver.unreadable()} webhook requests whose body was not JSON`);
  ctx.addRow({
    key: 'webhook-latency', what: `webhooks: event -> receiver, sends at ${rate}/s`, value: latencies.length, unit: 'webhooks',
    p50: latencyMs.p50, p99: latencyMs.p99, cpu, notes, cpuUnits: { count: accepted.length, per: 'email sent, delivered and webhooked (from the first send to the last webhook)' },
    detail: { rate, durationS, accepted: accepted.length, delivered: atSink.size, latencyMs, exactlyOnce, duplicates, missing, sameDeliveryAgain, badSignatures },
  });

  // ---- Retry gaps ---------------------------------------------------------------------------------------------
  const failHooks = receiver.hooks.slice(counted).filter((h) => h.path === '/fail');
  const byDelivery = new Map<string, number[]>();
  for (const h of failHooks) byDelivery.set(h.deliveryId, [...(byDelivery.get(h.deliveryId) ?? []), h.arrivedAt]);
  const all = (await admin<Deliveries>(service, 'GET', `/webhooks/${fail.webhookId}/deliveries?limit=100`)).deliveries;
  const api = new Map(all.map((d) => [d.id, d]));
  const detail = [...byDelivery].map(([id, arrivals]) => {
    const sorted = arrivals.sort((a, b) => a - b);
    const d = api.get(id);
    return { id, arrivals: sorted, apiStatus: d?.status, apiAttempts: d?.attempts.map((a) => a.status_code) ?? [] };
  });
  for (const d of all) if (!byDelivery.has(d.id)) detail.push({ id: d.id, arrivals: [], apiStatus: d.status, apiAttempts: d.attempts.map((a) => a.status_code) });
  const gaps = RETRY_GAPS_MS.map((wantMs, k) => {
    const values = detail.filter((d) => d.arrivals.length > k + 1).map((d) => d.arrivals[k + 1]! - d.arrivals[k]!);
    const p = percentiles(values);
    return {
      wantMs, count: values.length, min: values.length > 0 ? Math.min(...values) : NaN, p50: p.p50, max: p.max,
      within: values.filter((v) => v >= wantMs && v <= wantMs + RETRY_TOLERANCE_MS).length,
    };
  });
  const fourThenDiscarded = detail.filter((d) =>
    d.arrivals.length === 4 && d.apiStatus === 'discarded' && d.apiAttempts.length === 4 && d.apiAttempts.every((c) => c === 500)).length;
  ctx.addRow({
    key: 'webhook-retries', what: 'webhooks: always-500 receiver, gaps between attempts', value: detail.length, unit: 'deliveries',
    notes: [
      `${failAccepted} emails sent 0.5 to ${((500 + (RETRY_EMAILS - 1) * 300) / 1000).toFixed(1)} s into the load; ${detail.length} deliveries, ${failHooks.length} attempts at the receiver`,
      ...gaps.map((g, k) => `gap ${k + 1} (attempt ${k + 1} -> ${k + 2}, want ${g.wantMs} ms): ${g.count} deliveries, min ${ms(g.min)}, p50 ${ms(g.p50)}, max ${ms(g.max)} ms; ${g.within} within +${RETRY_TOLERANCE_MS} ms`),
      `per delivery (attempts at the receiver; management API status and status codes): ` +
        detail.map((d) => `${d.arrivals.length} ${d.apiStatus ?? '?'} [${d.apiAttempts.join(',')}]`).join('; '),
    ],
    detail: { deliveries: detail.map((d) => ({ ...d, gapsMs: d.arrivals.slice(1).map((t, i) => t - d.arrivals[i]!) })) },
  });

  await receiver.close();
  return {
    rate, durationS, accepted: accepted.length, delivered: atSink.size, requests: hooks.length, latencyMs,
    exactlyOnce, duplicates, missing, badSignatures,
    retry: { emails: failAccepted, deliveries: detail.length, gaps, fourThenDiscarded, detail },
  };
}
