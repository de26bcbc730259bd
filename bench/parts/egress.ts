import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { partContext, type BenchContext, type PartContext, type PartResult } from '../lib/context.js';
import { startEgressHarness, type EgressHarness, type SiteCounts } from '../lib/egress-harness.js';
import { DESTINATIONS, startMxZone } from '../lib/mx-zone.js';
import { EMAIL_REQUEST, SENDER_DOMAIN } from '../lib/payload.js';
import { prepareAccounts, startService, type ServiceHandle } from '../lib/service.js';
import { call } from './api-calls.js';
import { MX_HOSTNAME, publishSenderDomain } from './delivery-run.js';

/**
 * Egress shaping (issue 28 "Measured"): one service in direct mode delivering to 10 destination sites on
 * 127.0.0.2..11 (bench/lib/egress-harness.ts counts what each receives), with a rules file of its own:
 *
 * (a) after a warm-up of WARMUP_LOAD, EMAILS emails over the 10 sites, none throttling: the nine sites 1..9's
 *     delivered rate;
 * (b) the same load with site 0 answering `421 4.7.28` to 9 attempts in 10 and a rule throttling it to
 *     THROTTLE_PER_MIN: sites 1..9's rate against (a) (target >= 0.9), and site 0's attempts per sliding
 *     minute, from its first 421 on for OBSERVE_S (target: at most the rule's rate plus the bucket's one-second
 *     burst in every minute that starts 60 s or more after the first 421);
 * (c) WARMUP_EMAILS broadcast emails to sites 1..9 through a pool of two source addresses, each with a warm-up
 *     of WARMUP_PER_DAY today: what each address delivered (target: never more than its allowance);
 * and throughout, the most connections any site had open at once against its limit (CONNECTION_LIMIT).
 */
export const EGRESS_TARGET_RATIO = 0.9;
const EMAILS = 2000;
const BATCH = 100;
const WARMUP_LOAD = 500;
const CONNECTION_LIMIT = 3;
const THROTTLE_PER_MIN = 30;
/** One second's worth, at least one: the token bucket's capacity (delivery/egress/shaper.ts). */
const THROTTLE_BURST = Math.max(1, Math.ceil(THROTTLE_PER_MIN / 60));
const OBSERVE_S = 150;
const WARMUP_EMAILS = 300;
const WARMUP_PER_DAY = 100;
const SOURCES = ['127.0.0.50', '127.0.0.51'];
const LAST_ARRIVALS_MS = 30_000;

export interface EgressFigures {
  baselineRate: number;
  throttledRate: number;
  ratio: number;
  /** Site 0: the most attempts in any minute starting 60 s or more after its first 421, and the allowed most. */
  lateMinuteMax: number;
  allowedPerMinute: number;
  /** Site 0: seconds after its first 421 from which every minute stayed within the allowance. */
  fellWithinS: number;
  attemptsPerMinute: number[];
  maxOpen: number;
  connectionLimit: number;
  warmup: { address: string; delivered: number; allowance: number }[];
  warmupAccepted: number;
  failure?: string;
}

function rulesFile(today: string): string {
  return `# The bench's rules (bench/parts/egress.ts)
[default]
connection_limit = ${CONNECTION_LIMIT}
messages_per_connection = 100

[site.dest0]
mx = ["mx.dest0.test"]
[[site.dest0.automation]]
match = '4\\.7\\.28'
action = "throttle"
rate = "${THROTTLE_PER_MIN}/min"
duration = "30m"

[pool.bulk]
streams = ["broadcast"]
${SOURCES.map(
  (address, i) => `[[pool.bulk.source]]
address = "${address}"
ehlo = "out${i}.bench.mailer.test"
warmup = { start = "${today}", daily = [${WARMUP_PER_DAY}] }
`,
).join('')}`;
}

/** Delivered per second to sites 1..9 of the emails whose recipients start with `prefix`, from `since`. */
function nineSiteRate(h: EgressHarness, prefix: string, since: number): { delivered: number; rate: number } {
  const taken = h.sites.slice(1).flatMap((s) => s.taken.filter((t) => t.recipients.some((r) => r.startsWith(prefix))));
  if (taken.length === 0) return { delivered: 0, rate: 0 };
  const last = Math.max(...taken.map((t) => t.at));
  return { delivered: taken.length, rate: Math.round(taken.length / Math.max(0.001, (last - since) / 1000)) };
}

async function sendAll(
  svc: ServiceHandle,
  recipients: string[],
  extra: Record<string, unknown> = {},
): Promise<{ accepted: number; firstAt: number; refused: string[] }> {
  let accepted = 0;
  const refused: string[] = [];
  const firstAt = Date.now();
  const batches: string[][] = [];
  for (let i = 0; i < recipients.length; i += BATCH) batches.push(recipients.slice(i, i + BATCH));
  let next = 0;
  const lane = async () => {
    while (next < batches.length) {
      const batch = batches[next++]!;
      const emails = batch.map((to) => ({ ...EMAIL_REQUEST, ...extra, to: [to], subject: `egress ${to}` }));
      const r = await call(svc, 'POST', '/emails/batch', { emails });
      if (r.status === 200) accepted += batch.length;
      else refused.push(`${r.status} ${r.error ?? ''}`.slice(0, 200));
    }
  };
  await Promise.all([lane(), lane(), lane(), lane()]);
  return { accepted, firstAt, refused };
}

/** Until `count` messages with `prefix` arrived at sites 1..9, or the time is up. */
async function arrivals(h: EgressHarness, prefix: string, count: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until && nineSiteRate(h, prefix, 0).delivered < count) await sleep(200);
}

/** Attempts in each minute starting every 5 s from `from` to `to` (ms). */
function slidingMinutes(attempts: number[], from: number, to: number): { start: number; count: number }[] {
  const out = [];
  for (let s = from; s + 60_000 <= to; s += 5000)
    out.push({ start: s, count: attempts.filter((a) => a >= s && a < s + 60_000).length });
  return out;
}

const recipientsFor = (prefix: string, n: number, sites: number[]) =>
  Array.from({ length: n }, (_, i) => `${prefix}${i}@${DESTINATIONS[sites[i % sites.length]!]!.domain}`);

export async function egress(bench: BenchContext): Promise<PartResult<EgressFigures>> {
  const ctx = partContext(bench);
  const harness = await startEgressHarness();
  const dns = await startMxZone();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-egress-'));
  const rules = path.join(dir, 'egress-rules.toml');
  await writeFile(rules, rulesFile(new Date().toISOString().slice(0, 10)));
  await ctx.infra.createDatabase('bench_egress');
  const { SMTP_URL: _relay, ...env } = ctx.infra.serviceEnv('bench_egress', 'service-egress');
  const svc = await startService(
    {
      ...env,
      TEMPORAL_TASK_QUEUE: 'mail-egress',
      MAILER_HOSTNAME: MX_HOSTNAME,
      MAILER_DELIVERY: 'direct',
      MAILER_DNS_SERVERS: dns.servers,
      MAILER_MX_PORT: String(harness.port),
      MAILER_MX_ALLOW_PRIVATE: '1',
      MAILER_EGRESS_RULES: rules,
    },
    { name: 'service (egress)' },
  );
  ctx.underTest.server = svc;
  try {
    await prepareAccounts(svc, SENDER_DOMAIN, 0);
    await publishSenderDomain(svc, dns, SENDER_DOMAIN);
    return { rows: ctx.rows, figures: await measure(ctx, svc, harness) };
  } finally {
    await svc.stop();
    ctx.underTest.server = undefined;
    await dns.stop();
    await harness.stop();
  }
}

async function measure(ctx: PartContext, svc: ServiceHandle, h: EgressHarness): Promise<EgressFigures> {
  const all = DESTINATIONS.map((_, i) => i);
  const nine = all.slice(1);
  // Warm-up, not measured: the service's code compiled and every site's connections open, as in (b).
  const w = await sendAll(svc, recipientsFor('w', WARMUP_LOAD, all));
  await arrivals(h, 'w', (w.accepted * 9) / 10, LAST_ARRIVALS_MS);
  // (a) no site throttling.
  const a = await sendAll(svc, recipientsFor('a', EMAILS, all));
  await arrivals(h, 'a', (a.accepted * 9) / 10, LAST_ARRIVALS_MS);
  const base = nineSiteRate(h, 'a', a.firstAt);
  ctx.log(`egress (a): ${a.accepted} accepted, ${base.delivered} at sites 1..9, ${base.rate}/s`);

  // (b) site 0 answers 421 4.7.28 to 9 attempts in 10.
  const site0 = h.sites[0] as SiteCounts;
  site0.throttleEvery = 10;
  const attemptsBefore = site0.attempts.length;
  const b = await sendAll(svc, recipientsFor('b', EMAILS, all));
  await arrivals(h, 'b', (b.accepted * 9) / 10, LAST_ARRIVALS_MS);
  const throttled = nineSiteRate(h, 'b', b.firstAt);
  ctx.log(`egress (b): ${b.accepted} accepted, ${throttled.delivered} at sites 1..9, ${throttled.rate}/s`);
  const firstRefusal = site0.attempts[attemptsBefore] ?? b.firstAt;
  const observeEnd = firstRefusal + OBSERVE_S * 1000;
  while (Date.now() < observeEnd) await sleep(1000);
  const attempts = site0.attempts.slice(attemptsBefore);
  const windows = slidingMinutes(attempts, firstRefusal, observeEnd);
  const allowed = THROTTLE_PER_MIN + THROTTLE_BURST;
  const late = windows.filter((w) => w.start >= firstRefusal + 60_000);
  const lateMinuteMax = Math.max(0, ...late.map((w) => w.count));
  let fellAt = windows.length;
  while (fellAt > 0 && windows[fellAt - 1]!.count <= allowed) fellAt -= 1;
  const fellWithinS = fellAt < windows.length ? Math.round((windows[fellAt]!.start - firstRefusal) / 1000) : NaN;
  const attemptsPerMinute = [0, 60, 120].map(
    (s) => attempts.filter((t) => t >= firstRefusal + s * 1000 && t < firstRefusal + (s + 60) * 1000).length,
  );
  site0.throttleEvery = 0;

  // (c) broadcast through the warm-up pool.
  const c = await sendAll(svc, recipientsFor('c', WARMUP_EMAILS, nine), { stream: 'broadcast' });
  await arrivals(h, 'c', Math.min(c.accepted, SOURCES.length * WARMUP_PER_DAY), LAST_ARRIVALS_MS);
  await sleep(5000);
  const cTaken = h.sites.flatMap((s) => s.taken.filter((t) => t.recipients.some((r) => r.startsWith('c'))));
  const warmup = SOURCES.map((address) => ({
    address,
    delivered: cTaken.filter((t) => t.source === address).length,
    allowance: WARMUP_PER_DAY,
  }));
  const maxOpen = Math.max(...h.sites.map((s) => s.maxOpen));
  const refused = [...a.refused, ...b.refused, ...c.refused];

  const ratio = base.rate > 0 ? Math.round((throttled.rate / base.rate) * 100) / 100 : 0;
  ctx.addRow({
    key: 'egress-nine-sites',
    what: 'egress: 9 sites delivered while a 10th throttles, vs none throttling',
    value: ratio,
    unit: 'ratio',
    notes: [
      `(a) ${base.delivered} delivered to sites 1..9 at ${base.rate}/s; (b) ${throttled.delivered} at ${throttled.rate}/s while site 0 refused ${site0.refusals} attempts with 421 4.7.28`,
      ...(refused.length > 0 ? [`refused batches: ${refused.slice(0, 3).join('; ')}`] : []),
    ],
  });
  ctx.addRow({
    key: 'egress-throttled-site',
    what: `egress: site 0's attempts per minute, rule ${THROTTLE_PER_MIN}/min (+${THROTTLE_BURST} burst)`,
    value: lateMinuteMax,
    unit: 'attempts/min',
    notes: [
      `attempts in minutes 1, 2, 3 after the first 421: ${attemptsPerMinute.join(', ')}; every sliding minute within ${allowed} from ${fellWithinS} s after the first 421`,
    ],
  });
  ctx.addRow({
    key: 'egress-connections',
    what: 'egress: most connections open at once at any site',
    value: maxOpen,
    unit: 'connections',
    notes: [`per site: ${h.sites.map((s) => s.maxOpen).join(', ')}; limit ${CONNECTION_LIMIT}`],
  });
  ctx.addRow({
    key: 'egress-warmup',
    what: `egress: broadcast through 2 warming addresses of ${WARMUP_PER_DAY}/day`,
    value: Math.max(...warmup.map((w) => w.delivered)),
    unit: 'mails/address',
    notes: [`${c.accepted} accepted; ${warmup.map((w) => `${w.address}: ${w.delivered}`).join(', ')}`],
  });
  return {
    baselineRate: base.rate,
    throttledRate: throttled.rate,
    ratio,
    lateMinuteMax,
    allowedPerMinute: allowed,
    fellWithinS,
    attemptsPerMinute,
    maxOpen,
    connectionLimit: CONNECTION_LIMIT,
    warmup,
    warmupAccepted: c.accepted,
  };
}
