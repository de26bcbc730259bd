import type { Part } from './parts.js';

/** The bench's fixed settings and the sizes a run may change (bench/README.md, "Parts"). */

// Every HTTP figure: 10 s of load after a 2 s warm-up (JIT, pools, connections) that is not counted.
export const RUN_S = 10;
/**
 * The fixed-rate latency run's first second, whose requests' latencies are kept apart (load.ts says why):
 * the run lasts RUN_S more, so its measured part is as long as the others.
 */
export const RAMP_S = 1;
export const WARMUP_S = 2;
// 32 keep-alive connections with one request each in flight: enough to keep a one-thread server and a
// 40-connection pool busy (the service has at most a few round trips per request in flight), few enough
// that latency at the maximum rate is not mostly queueing in front of the server. The figures hardly
// move between 16 and 64 (bench/README.md).
export const CONNECTIONS = 32;
// Baseline 3's pool: 8 pooled SMTP connections (the service's relay transport has 16: RELAY_CONNECTIONS in
// src/app/outbound-transport.ts). The service's activities keep up to 32 x 16 sends queued on theirs; 64 queued sendMail calls keep the pool full all the time.
export const SMTP_MAX_CONNECTIONS = 8;
export const SMTP_IN_FLIGHT = 64;
export const TEMPORAL_CONCURRENCY = 16;
export const MANY_ACCOUNTS = 10;
export const BATCH_SIZE = 100;
// The parts plan for 7 minutes (the inbound figure and the second scheduled burst have time of their own; the
// sustained run needs its 48 s after max-rate drains of up to 30,000 emails): phases shorten their drain waits to fit, the memory
// figure creates as many scheduled emails as the time left allows (saying how many), and a watchdog
// cleans up and exits at the hard limit whatever is going on.
export const BUDGET_MS = 420_000;
export const HARD_LIMIT_MS = 435_000;
/**
 * The budget above (and every time a part plans with: MIN_MS, scheduledLargeMs) is sized for a machine whose
 * DKIM-signed nodemailer baseline sends about this many mails a second. On a slower one the same work takes
 * longer, and a fixed budget left the last parts out (session 27: 331-373 mails/s, the webhook, deliverability
 * and memory figures skipped, the 10,000 burst cut): once the baselines are measured, the budget and the
 * watchdog stretch by how much slower the machine is, up to MAX_BUDGET_SCALE.
 */
export const BUDGET_REFERENCE_SIGNED_PER_S = 1_000;
export const MAX_BUDGET_SCALE = 2.5;

/** How much longer than planned the parts may take on a machine whose signed baseline measured `signedPerSec`. */
export function budgetScale(signedPerSec: number | undefined): number {
  if (signedPerSec === undefined || !(signedPerSec > 0)) return 1;
  return Math.min(MAX_BUDGET_SCALE, Math.max(1, BUDGET_REFERENCE_SIGNED_PER_S / signedPerSec));
}
// The lists figure (BENCH_ONLY=lists, never in the default run) seeds 10,000,000 emails first: 8 to 15
// minutes on 2 cores. Its time is its own, added to the budget and the hard limit.
export const LISTS_MS = 40 * 60_000;
// The inbound figure (bench/parts/inbound.ts) has time of its own too, added when it runs: its 30 s of load,
// up to 20 s for the last events, the large message, and setting up.
export const INBOUND_MS = 75_000;
// The stats figure (BENCH_ONLY=stats, never in the default run) seeds 1,000,000 emails with their events and
// waits for the worker's fold (about a minute and a half on 2 cores), then measures: its time is its own too.
export const STATS_MS = 4 * 60_000;
// What the parts after the service's throughput runs need at least; the throughput drains leave it to them.
export const MIN_MS: Partial<Record<Part, number>> = {
  batch: 30_000,
  // 24 s of sends at a fixed rate (4 s of warm-up, 20 one-second segments), then the templated batches (10 to 15 s)
  // once the sink is quiet (a second or two where 300/s is well under the delivery rate; at most 30 s, planned).
  templates: 45_000,
  // Two imports of 100,000 rows (a few seconds each) and the export.
  suppressions: 30_000,
  // The first burst (BENCH_SCHEDULED_COUNT, 1,000) and its raw nodemailer time; the second has time of its own
  // (scheduledLargeMs, added to the budget).
  scheduled: 40_000,
  webhooks: 25_000,
  deliverability: 40_000,
  memory: 50_000,
};
// The sustained run (bench/lib/sustained.ts): 30 s at a fixed rate, the issue's "accepted = delivered
// for 30 s"; its time is kept from the throughput part's half and many-accounts runs: up to 5 s for the
// sink to go quiet, 30 s of load and the lanes' 1 s stagger, a drain of up to SUSTAINED_DRAIN_MS, the settle.
export const SUSTAINED_S = 30;
export const SUSTAINED_DRAIN_MS = 10_000;
export const SUSTAINED_MS = 48_000;
// The scheduled figure's second burst (BENCH_SCHEDULED_LARGE_COUNT, 10,000 due in one second) has time of its
// own, added to the budget and the watchdog when `scheduled` runs, and kept from the throughput runs: raw signed
// nodemailer sending as many with its child's start and warm-up (about 9 s for 10,000 on 2 cores), the creation
// planned at the first burst's rate with a 1.3 margin, then 8 s of quiet (about 25 s at 800 a second, 40 s at
// 400), the firing and delivery (11 to 12 s). 46 s alone on this machine; 60 s for 10,000.
export function scheduledLargeMs(count: number): number {
  return 10_000 + count * 5;
}
// The memory figure's steps after creating its scheduled emails (settle, samples, stopping, output).
export const MEMORY_TAIL_MS = 30_000;

/** The sizes of the job and webhook figures; each can be changed for a run alone. */
export interface Sizes {
  batchRuns: number;
  /** The first scheduled burst: emails due in the same second. */
  scheduledCount: number;
  /** The second scheduled burst, after the first (time of its own: scheduledLargeMs). */
  scheduledLargeCount: number;
  memoryPending: number;
  /**
   * The webhook figures' send load: a fixed rate, below what the service delivers without webhooks (its
   * half-rate run: 130 to 175 a second on 2 cores).
   */
  webhookRate: number;
  /**
   * The deliverability figure's load: seconds of sending to 10 domains for each of the relay and direct
   * services (the time budget may shorten it in the whole bench).
   */
  deliverabilitySeconds: number;
  /** The lists figure: emails in the database (a tenth in the measured account), and requests per list and filter. */
  listsEmails: number;
  listsRequests: number;
  /** The stats figure: emails in the measured account, and requests per grouping and range. */
  statsEmails: number;
  statsRequests: number;
}

export function readSizes(env: NodeJS.ProcessEnv = process.env): Sizes {
  const envInt = (name: string, fallback: number) => {
    const n = Number(env[name] ?? fallback);
    if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer`);
    return n;
  };
  return {
    batchRuns: envInt('BENCH_BATCH_RUNS', 20),
    scheduledCount: envInt('BENCH_SCHEDULED_COUNT', 1_000),
    scheduledLargeCount: envInt('BENCH_SCHEDULED_LARGE_COUNT', 10_000),
    memoryPending: envInt('BENCH_MEMORY_PENDING', 10_000),
    webhookRate: envInt('BENCH_WEBHOOK_RATE', 100),
    deliverabilitySeconds: envInt('BENCH_DELIVERABILITY_SECONDS', 10),
    listsEmails: envInt('BENCH_LISTS_EMAILS', 10_000_000),
    listsRequests: envInt('BENCH_LISTS_REQUESTS', 100),
    statsEmails: envInt('BENCH_STATS_EMAILS', 1_000_000),
    statsRequests: envInt('BENCH_STATS_REQUESTS', 200),
  };
}
