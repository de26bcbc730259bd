import { setTimeout as sleep } from 'node:timers/promises';
import type { DnsServer } from '../../test/helpers/dns-server.js';
import type { PartContext } from '../lib/context.js';
import type { SinkCount } from '../lib/infrastructure.js';
import { DESTINATIONS, destinationQueries, recipient } from '../lib/mx-zone.js';
import { EMAIL_REQUEST, SENDER_DOMAIN } from '../lib/payload.js';
import { admin, prepareAccounts, startService, type ServiceHandle } from '../lib/service.js';
import { BATCH_SIZE } from '../lib/settings.js';
import { call, tag, type Arrivals } from './api-calls.js';

/**
 * One half of the relay-vs-direct figure: a service process of its own (own database, own task queue, so
 * that nothing another figure left in Temporal reaches it) in one delivery mode, sent the same load, its
 * delivery rate taken at the sink.
 */
export type Mode = 'relay' | 'direct';

export interface DeliveryRun {
  mode: Mode;
  accepted: number;
  delivered: number;
  /** Delivered per second from the first accepted batch to the last arrival at the sink. */
  deliveredPerSec: number;
  seconds: number;
  /** All accepted emails arrived before the time cap. */
  complete: boolean;
  /** Of those delivered, how many carried a DKIM-Signature header. */
  signed: number;
  duplicates: number;
  /** Delivered to another address than the one this mode must use (relay: the sink's 127.0.0.1; direct: the domain's MX). */
  misrouted: number;
  /** Sink addresses that received this run's mail. */
  hosts: number;
  /** Why there is no figure (the service did not start, or did not deliver its warm-up). */
  failure?: string;
}

/** Batch requests in flight: enough to keep the service's accept path ahead of its delivery. */
const BATCHES_IN_FLIGHT = 4;
/**
 * Accepted and not yet arrived, at most, before another batch is sent: seconds of work at the rates seen
 * (150 to 300 a second), so the service never runs dry while sending lasts, and what is left when it ends
 * arrives within a few seconds.
 */
const MAX_OUTSTANDING = 400;
const WARMUP_TIMEOUT_MS = 15_000;
/** The longest wait for the last arrivals once sending has stopped. */
const LAST_ARRIVALS_MS = 15_000;
export const MX_HOSTNAME = 'bench.mailer.test';

/** The service's environment for `mode`: relay through the sink, or direct to the zone's MX hosts at the sink's port. */
function modeEnv(ctx: PartContext, mode: Mode, dns: DnsServer, mxPort: number): Record<string, string> {
  const base: Record<string, string> = {
    ...ctx.infra.serviceEnv(`bench_${mode}`, `service-${mode}`),
    TEMPORAL_TASK_QUEUE: `mail-${mode}`,
    MAILER_HOSTNAME: MX_HOSTNAME,
  };
  if (mode === 'relay') return { ...base, MAILER_DELIVERY: 'relay' };
  // No SMTP_URL: mail that reaches the sink can only have come through the MX hosts.
  const { SMTP_URL: _relay, ...direct } = base;
  return {
    ...direct,
    MAILER_DELIVERY: 'direct',
    MAILER_DNS_SERVERS: dns.servers,
    MAILER_MX_PORT: String(mxPort),
    MAILER_MX_ALLOW_PRIVATE: '1',
  };
}

/** Starts the service in `mode`, warms it up, sends batches of 100 to the 10 domains for `sendS` seconds, and measures their delivery. */
export async function deliveryRun(
  ctx: PartContext,
  mode: Mode,
  { dns, mxPort, sendS }: { dns: DnsServer; mxPort: number; sendS: number },
): Promise<DeliveryRun> {
  const what = `deliverability: ${mode} to ${DESTINATIONS.length} domains, delivered`;
  const failed = (failure: string): DeliveryRun => {
    ctx.addRow({ key: `deliver-${mode}`, what, value: 0, unit: 'mails/s', notes: [`FAILED: ${failure}`] });
    return {
      mode,
      accepted: 0,
      delivered: 0,
      deliveredPerSec: 0,
      seconds: 0,
      complete: false,
      signed: 0,
      duplicates: 0,
      misrouted: 0,
      hosts: 0,
      failure,
    };
  };
  await ctx.infra.createDatabase(`bench_${mode}`);
  let svc: ServiceHandle;
  try {
    svc = await startService(modeEnv(ctx, mode, dns, mxPort), { name: `${mode} service` });
  } catch (err) {
    return failed(`the ${mode} service did not start: ${(err as Error).message.slice(0, 800)}`);
  }
  ctx.underTest.server = svc;
  try {
    await prepareAccounts(svc, SENDER_DOMAIN, 0);
    if (mode === 'direct') {
      const unpublished = await publishSenderDomain(svc, dns, SENDER_DOMAIN).then(
        () => undefined,
        (err: unknown) => (err as Error).message,
      );
      if (unpublished !== undefined) return failed(unpublished);
    }
    ctx.log(
      `${mode} service started (pid ${svc.pid}); warm-up: ${BATCH_SIZE} emails to ${DESTINATIONS.length} domains`,
    );
    const warm = await sendBatches(ctx, svc, `[bench ${tag(`${mode[0]}w`)}]`, { emails: BATCH_SIZE });
    const arrived = await ctx.infra.sink.request<Arrivals>('waitFor', {
      prefix: warm.prefix,
      count: warm.accepted,
      timeoutMs: WARMUP_TIMEOUT_MS,
    });
    if (warm.accepted < BATCH_SIZE || arrived.distinct < warm.accepted)
      return failed(await diagnose(ctx, mode, svc, dns, warm, arrived));
    return await measured(ctx, mode, svc, what, sendS);
  } finally {
    await svc.stop();
    ctx.underTest.server = undefined;
  }
}

/**
 * Direct delivery sends only from a domain whose DKIM record is verified (services/sender-check.ts): the seeded
 * sender domain's TXT records (ownership, SPF, DKIM, DMARC) are published in the bench's DNS and the domain
 * verified through it, as its owner would.
 */
export async function publishSenderDomain(svc: ServiceHandle, dns: DnsServer, name: string): Promise<void> {
  type Domain = {
    id: string;
    name: string;
    dns_records: { type: string; name: string; value: string; purpose: string; status: string }[];
  };
  const { domains } = await admin<{ domains: Domain[] }>(svc, 'GET', `/accounts/${svc.accountId}/domains`);
  const domain = domains.find((d) => d.name === name);
  if (!domain) throw new Error(`the service has no domain ${name}`);
  const txt = new Map<string, string[]>();
  for (const r of domain.dns_records) if (r.type === 'TXT') txt.set(r.name, [...(txt.get(r.name) ?? []), r.value]);
  for (const [host, values] of txt) dns.set(host, 'TXT', values);
  const checked = await admin<Domain>(svc, 'POST', `/domains/${domain.id}/verify`, {});
  if (!checked.dns_records.some((r) => r.purpose === 'dkim' && r.status === 'verified')) {
    throw new Error(
      `the DKIM record of ${name} did not verify through the bench's DNS: ${JSON.stringify(checked.dns_records)}`,
    );
  }
}

/** The measured load and its row: delivered per second from the first accept to the last arrival. */
async function measured(
  ctx: PartContext,
  mode: Mode,
  svc: ServiceHandle,
  what: string,
  sendS: number,
): Promise<DeliveryRun> {
  const before = await sinkState(ctx);
  const w = ctx.window();
  const load = await sendBatches(ctx, svc, `[bench ${tag(mode[0]!)}]`, { untilMs: performance.now() + sendS * 1000 });
  const a = await ctx.infra.sink.request<Arrivals>('waitFor', {
    prefix: load.prefix,
    count: load.accepted,
    timeoutMs: LAST_ARRIVALS_MS,
  });
  const cpu = w.stop();
  const after = await sinkState(ctx);
  const seconds =
    a.lastAt !== null && load.firstAcceptAt !== null ? Math.max(0.001, (a.lastAt - load.firstAcceptAt) / 1000) : NaN;
  const deliveredPerSec = a.distinct > 0 ? Math.round(a.distinct / seconds) : 0;
  const routes = routeCounts(before.routes, after.routes, mode);
  const signed = after.count.signed - before.count.signed;
  const received = after.count.total - before.count.total;
  const run: DeliveryRun = {
    mode,
    accepted: load.accepted,
    delivered: a.distinct,
    deliveredPerSec,
    seconds: Math.round(seconds * 100) / 100,
    complete: a.distinct >= load.accepted,
    signed,
    duplicates: a.total - a.distinct,
    misrouted: routes.misrouted,
    hosts: routes.hosts,
  };
  const notes = [
    `${load.accepted} accepted in ${load.seconds.toFixed(1)} s (POST /emails/batch of ${BATCH_SIZE}, ${BATCHES_IN_FLIGHT} in flight, at most ${MAX_OUTSTANDING} not yet arrived); ` +
      `${a.distinct} delivered ${run.seconds} s after the first accept${run.complete ? '' : ` (NOT ALL: ${load.accepted - a.distinct} still missing ${LAST_ARRIVALS_MS / 1000} s after sending stopped)`}`,
    `${signed} of ${received} received DKIM-signed${signed < received ? ' (NOT ALL: the target needs every message signed)' : ''}; ${routes.summary}`,
    ...(load.refused.length > 0 ? [`refused batches: ${load.refused.join('; ')}`] : []),
    ...(run.duplicates > 0 ? [`${run.duplicates} arrived more than once`] : []),
  ];
  ctx.addServiceRow({
    key: `deliver-${mode}`,
    what,
    value: deliveredPerSec,
    unit: 'mails/s',
    cpu,
    notes,
    detail: { ...run, routes: routes.delta },
  });
  return run;
}

/**
 * Batches of 100, `BATCHES_IN_FLIGHT` requests at a time: `emails` of them, or as many as are sent before
 * `untilMs` (performance.now()) with at most MAX_OUTSTANDING accepted and not yet at the sink. Recipients
 * cycle over the destination domains.
 */
async function sendBatches(
  ctx: PartContext,
  svc: ServiceHandle,
  prefix: string,
  limit: { emails?: number; untilMs?: number },
) {
  const { emails = Infinity, untilMs = Infinity } = limit;
  let next = 0;
  let accepted = 0;
  let arrived = 0;
  let firstAcceptAt: number | null = null;
  const refused: string[] = [];
  const t0 = performance.now();
  const lane = async () => {
    while (next < emails && performance.now() < untilMs) {
      if (accepted - arrived >= MAX_OUTSTANDING) {
        await sleep(100);
        arrived = (await ctx.infra.sink.request<Arrivals>('summary', { prefix })).distinct;
        continue;
      }
      const first = next;
      next = Math.min(emails, next + BATCH_SIZE);
      const batch = Array.from({ length: next - first }, (_, k) => ({
        ...EMAIL_REQUEST,
        to: [recipient(first + k)],
        subject: `${prefix} ${first + k}`,
      }));
      const r = await call<{ job_id: string }>(svc, 'POST', '/emails/batch', { emails: batch });
      if (r.status !== 200) {
        refused.push(`${r.status} ${r.error ?? ''}`.slice(0, 200));
        if (refused.length >= 3) return;
        continue;
      }
      firstAcceptAt ??= Date.now();
      accepted += batch.length;
    }
  };
  await Promise.all(Array.from({ length: BATCHES_IN_FLIGHT }, lane));
  return {
    prefix,
    accepted,
    firstAcceptAt: firstAcceptAt as number | null,
    refused,
    seconds: (performance.now() - t0) / 1000,
  };
}

async function sinkState(ctx: PartContext): Promise<{ count: SinkCount; routes: Record<string, number> }> {
  const [count, r] = await Promise.all([
    ctx.infra.sinkCount(),
    ctx.infra.sink.request<{ routes: Record<string, number> }>('routes'),
  ]);
  return { count, routes: r.routes };
}

/** Where this run's messages arrived (`<address> <domain>` deltas), how many at the wrong address, and a summary. */
function routeCounts(before: Record<string, number>, after: Record<string, number>, mode: Mode) {
  const delta: Record<string, number> = {};
  for (const [k, n] of Object.entries(after)) if (n - (before[k] ?? 0) > 0) delta[k] = n - (before[k] ?? 0);
  const expected = (domain: string) =>
    mode === 'relay' ? '127.0.0.1' : DESTINATIONS.find((d) => d.domain === domain)?.address;
  let misrouted = 0;
  const perAddress = new Map<string, number>();
  for (const [k, n] of Object.entries(delta)) {
    const [address, domain] = k.split(' ') as [string, string];
    if (address !== expected(domain)) misrouted += n;
    perAddress.set(address, (perAddress.get(address) ?? 0) + n);
  }
  const counts = [...perAddress.values()];
  const spread =
    counts.length > 0
      ? `${perAddress.size} address(es) received mail (${Math.min(...counts)} to ${Math.max(...counts)} each)`
      : 'nothing received';
  return {
    delta,
    misrouted,
    hosts: perAddress.size,
    summary: `${spread}; ${misrouted} at another address than ${mode === 'relay' ? 'the relay (127.0.0.1)' : "their domain's MX host"}`,
  };
}

/** Why the warm-up did not arrive: what the service looked up, where mail went, what it logged. */
async function diagnose(
  ctx: PartContext,
  mode: Mode,
  svc: ServiceHandle,
  dns: DnsServer,
  warm: { accepted: number; refused: string[] },
  arrived: Arrivals,
): Promise<string> {
  const routes = (await ctx.infra.sink.request<{ byAddress: Record<string, number> }>('routes')).byAddress;
  const problems = svc.problems();
  const queries = mode === 'direct' ? destinationQueries(dns) : {};
  return [
    `${arrived.distinct} of ${warm.accepted} warm-up emails arrived within ${WARMUP_TIMEOUT_MS / 1000} s` +
      (warm.refused.length > 0 ? ` (batch refused: ${warm.refused[0]})` : ''),
    ...(mode === 'direct'
      ? [
          `DNS questions about the destinations: ${
            Object.entries(queries)
              .map(([t, n]) => `${n} ${t}`)
              .join(', ') || 'none (does this checkout deliver direct at all?)'
          }`,
        ]
      : []),
    `sink totals by address so far: ${JSON.stringify(routes)}`,
    `the service logged ${problems.count} warnings/errors${problems.count > 0 ? `; last: ${gist(problems.last.at(-1)!)}` : ''}`,
  ].join('; ');
}

/** A pino line's message and error message (the line itself is cut at 600 characters and may not parse). */
function gist(line: string): string {
  const field = (name: string) => new RegExp(`"${name}":"((?:[^"\\\\]|\\\\.)*)"`).exec(line)?.[1];
  const parts = [field('msg'), field('activityType') && `activity ${field('activityType')}`, field('message')].filter(
    Boolean,
  );
  return parts.length > 0 ? parts.join(': ').slice(0, 300) : line.slice(0, 300);
}
