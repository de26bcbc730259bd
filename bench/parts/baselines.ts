import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { migrate } from '../../src/db/migrate.js';
import { createSql } from '../../src/db/sql.js';
import type { Logger } from '../../src/logger.js';
import { startChild, type BenchChild, type ReadyOnly } from '../lib/children.js';
import { benchDkimKey, type DkimKey } from '../lib/dkim-key.js';
import { SENDER_DOMAIN } from '../lib/payload.js';
import {
  measuring,
  partContext,
  type BenchContext,
  type JobsContext,
  type PartContext,
  type PartResult,
} from '../lib/context.js';
import { httpTarget, measureMax } from '../lib/http-figure.js';
import { onCleanup } from '../lib/lifecycle.js';
import { RUN_S, SMTP_IN_FLIGHT, SMTP_MAX_CONNECTIONS, TEMPORAL_CONCURRENCY, WARMUP_S } from '../lib/settings.js';
import { measureStarts } from '../lib/temporal-starts.js';
import { tag, type Arrivals } from './api-calls.js';

/** The signed baseline's run: shorter than the other baselines' 10 s, for the time budget. */
const SIGNED_BASELINE_S = 4;

/** The rates the service is judged against (bench/README.md, "What runs"), each server in a process of its own. */
export interface BaselineFigures {
  insertRate: number;
  nodemailerRate: number;
  /** Baseline 3 with every message DKIM-signed, as the service signs (the delivery ratio takes the slower). */
  signedNodemailerRate?: number;
  temporalStartRate: number;
}

export async function baselines(bench: BenchContext, logger: Logger): Promise<PartResult<BaselineFigures>> {
  const ctx = partContext(bench);
  await noopRoute(ctx);
  const insertRate = await routeWithInsert(ctx, logger);
  const { nodemailerRate, signedNodemailerRate } = await rawNodemailer(ctx);
  const temporalStartRate = await temporalStarts(ctx);
  return { rows: ctx.rows, figures: { insertRate, nodemailerRate, signedNodemailerRate, temporalStartRate } };
}

/** Baseline 1: a no-op Fastify route. */
async function noopRoute(ctx: PartContext): Promise<void> {
  const child = await startChild<{ port: number }>('no-op server', 'noop-server.ts');
  await measuring(ctx, child, (c) =>
    measureMax(ctx, 'noop', 'baseline: Fastify no-op route', httpTarget(c.ready.port)),
  );
}

/** Baseline 2: a Fastify route doing one INSERT of the same row into the service's emails table. */
async function routeWithInsert(ctx: PartContext, logger: Logger): Promise<number> {
  const { pg } = ctx.infra;
  const sql = createSql(pg.url, { max: 1 });
  await migrate(sql, logger);
  await sql`insert into accounts (id, name, daily_quota) values ('acc_bench', 'bench', 0)`;
  await sql.end();
  const child = await startChild<{ port: number }>('INSERT server', 'insert-server.ts', {
    ...process.env,
    BENCH_DATABASE_URL: pg.url,
    BENCH_ACCOUNT_ID: 'acc_bench',
  });
  const { run } = await measuring(ctx, child, (c) =>
    measureMax(ctx, 'insert', 'baseline: Fastify route + one INSERT', httpTarget(c.ready.port)),
  );
  return run.okPerSec;
}

/**
 * Baseline 3: raw nodemailer pooled sends to the sink, unsigned, then DKIM-signed (the service signs every
 * message: the slower of the two is what delivery is judged against). The signed run is shorter, for the
 * time budget (the deliverability part measures it too, beside the DKIM cost).
 */
async function rawNodemailer(ctx: PartContext): Promise<{ nodemailerRate: number; signedNodemailerRate: number }> {
  const child = await startChild<ReadyOnly>('nodemailer sender', 'mail-sender.ts');
  return measuring(ctx, child, async () => ({
    nodemailerRate: await nodemailerSends(ctx, child, {
      key: 'nodemailer',
      what: 'baseline: raw nodemailer pooled sends',
    }),
    signedNodemailerRate: await nodemailerSends(ctx, child, {
      key: 'nodemailer-dkim-base',
      what: 'baseline: raw nodemailer pooled sends, DKIM-signed',
      dkim: benchDkimKey(SENDER_DOMAIN),
      runS: SIGNED_BASELINE_S,
      warmupS: 1,
    }),
  }));
}

/**
 * Baseline 3's measurement on a started mail-sender child: a warm-up, then `runS` seconds of pooled sends
 * to the sink (each DKIM-signed with `dkim`); the row, and the rate.
 */
export async function nodemailerSends(
  ctx: PartContext,
  child: BenchChild<ReadyOnly>,
  {
    key,
    what,
    dkim,
    runS = RUN_S,
    warmupS = WARMUP_S,
  }: { key: string; what: string; dkim?: DkimKey; runS?: number; warmupS?: number },
): Promise<number> {
  const arg = {
    smtpUrl: ctx.infra.sink.ready.url,
    maxConnections: SMTP_MAX_CONNECTIONS,
    inFlight: SMTP_IN_FLIGHT,
    ...(dkim ? { dkim } : {}),
  };
  await child.request('run', { ...arg, durationMs: warmupS * 1000 });
  const before = await ctx.infra.sinkCount();
  const w = ctx.window();
  const r = await child.request<{ sent: number; failed: number; elapsedMs: number; firstError?: string }>('run', {
    ...arg,
    durationMs: runS * 1000,
  });
  const cpu = w.stop();
  await sleep(300);
  const after = await ctx.infra.sinkCount();
  const rate = Math.round(r.sent / (r.elapsedMs / 1000));
  const notes = [
    `${SMTP_MAX_CONNECTIONS} pooled connections, ${SMTP_IN_FLIGHT} sendMail calls outstanding, ${runS} s; sink received ${after.total - before.total} of ${r.sent} sent` +
      (dkim ? `, ${after.signed - before.signed} DKIM-signed (RSA-2048, d=${dkim.domainName})` : ''),
  ];
  if (r.failed > 0) notes.push(`${r.failed} failed: ${r.firstError}`);
  ctx.addRow({ key, what, value: rate, unit: 'mails/s', cpu, notes, detail: r });
  return rate;
}

/** Raw DKIM-signed nodemailer delivering exactly `count` messages at once: what a scheduled burst of as many is held to. */
export interface BurstBaseline {
  count: number;
  sent: number;
  failed: number;
  /** Distinct messages at the sink within the wait. */
  arrived: number;
  /** From the first send (the sender's Date.now()) to the last of the `count` at the sink (the sink's): NaN when not all arrived. */
  ms: number;
  firstError?: string;
}

/**
 * The scheduled bursts' baseline (bench/README.md, "Scheduled lateness"): baseline 3's sender, signing every
 * message (a key made for the run, as the service signs), sends exactly `count` messages as fast as its pool
 * takes them, each with a subject the sink tracks; the figure is the time from its first send to the last
 * message's arrival, on the same machine and in the same run as the burst it is held against. A 1 s
 * warm-up first (JIT, the key), on a pool of its own; the counted run opens its connections within its time, as
 * a service whose pool has gone idle would.
 */
export async function signedNodemailerBurst(ctx: JobsContext, count: number): Promise<BurstBaseline> {
  const child = await startChild<ReadyOnly>('nodemailer sender (burst)', 'mail-sender.ts');
  try {
    const arg = {
      smtpUrl: ctx.sink.ready.url,
      maxConnections: SMTP_MAX_CONNECTIONS,
      inFlight: SMTP_IN_FLIGHT,
      dkim: benchDkimKey(SENDER_DOMAIN),
    };
    await child.request('run', { ...arg, durationMs: 1_000 });
    const prefix = `[bench ${tag('nb')}]`;
    // The sender in the `server` columns for its row (the service's API idles meanwhile), as in baseline 3's.
    const { r, a, cpu } = await ctx.asServer(child, async () => {
      const w = ctx.window();
      const r = await child.request<{ sent: number; failed: number; startedAt: number; firstError?: string }>('run', {
        ...arg,
        count,
        subjectPrefix: prefix,
      });
      const a = await ctx.sink.request<Arrivals>('waitFor', { prefix, count, timeoutMs: 10_000 });
      return { r, a, cpu: w.stop() };
    });
    const ms = a.distinct === count && a.lastAt !== null ? a.lastAt - r.startedAt : NaN;
    const result: BurstBaseline = {
      count,
      sent: r.sent,
      failed: r.failed,
      arrived: a.distinct,
      ms,
      ...(r.firstError ? { firstError: r.firstError } : {}),
    };
    const notes = [
      `${SMTP_MAX_CONNECTIONS} pooled connections, ${SMTP_IN_FLIGHT} sendMail calls outstanding, every message signed (RSA-2048); ` +
        `${a.distinct} of ${count} at the sink` +
        (Number.isNaN(ms) ? ' within 10 s of the last send: no figure' : ` (${Math.round((count / ms) * 1000)}/s)`),
    ];
    if (r.failed > 0) notes.push(`${r.failed} failed: ${r.firstError}`);
    ctx.addRow({
      key: `nodemailer-dkim-burst-${count}`,
      what: `baseline: raw nodemailer, DKIM-signed, ${count} messages at once, first send -> last at sink`,
      value: ms,
      unit: 'ms',
      cpu,
      cpuUnits: { count: a.distinct, per: 'message' },
      notes,
      detail: { ...result },
    });
    return result;
  } finally {
    await child.stop();
  }
}

/** Baseline 4: Temporal dev server workflow starts, 16 in flight and then one at a time. */
async function temporalStarts(ctx: PartContext): Promise<number> {
  const { temporal, bundles } = ctx.infra;
  const taskQueue = 'bench-noop';
  const child = await startChild<ReadyOnly>('Temporal worker', 'temporal-worker.ts', {
    ...process.env,
    BENCH_TEMPORAL_ADDRESS: temporal.address,
    BENCH_TASK_QUEUE: taskQueue,
    BENCH_WORKFLOW_BUNDLE: bundles.noop,
  });
  return measuring(ctx, child, async () => {
    const connection = await Connection.connect({ address: temporal.address });
    onCleanup('close the Temporal client', () => connection.close());
    const client = new Client({ connection, namespace: 'default' });
    await measureStarts(client, taskQueue, TEMPORAL_CONCURRENCY, WARMUP_S * 1000, 5_000);
    let w = ctx.window();
    const r = await measureStarts(client, taskQueue, TEMPORAL_CONCURRENCY, RUN_S * 1000, 15_000);
    let cpu = w.stop();
    const notes = [
      `${TEMPORAL_CONCURRENCY} starts in flight; ${r.completed ?? '?'} of ${r.started} completed ${r.completionWaitS ?? '?'} s after the last start`,
    ];
    if (r.failed > 0) notes.push(`${r.failed} failed: ${r.firstError}`);
    ctx.addRow({
      key: 'temporal',
      what: `baseline: Temporal workflow starts (${TEMPORAL_CONCURRENCY} at once)`,
      value: r.startsPerSec,
      unit: 'starts/s',
      p50: r.startLatencyMs.p50,
      p99: r.startLatencyMs.p99,
      cpu,
      notes,
      detail: { ...r },
    });
    // One start at a time, as the service's dispatcher does: the latency of a start bounds how often it can start a group.
    w = ctx.window();
    const seq = await measureStarts(client, taskQueue, 1, 5_000, 5_000);
    cpu = w.stop();
    ctx.addRow({
      key: 'temporal-seq',
      what: 'baseline: Temporal workflow starts (1 at a time)',
      value: seq.startsPerSec,
      unit: 'starts/s',
      p50: seq.startLatencyMs.p50,
      p99: seq.startLatencyMs.p99,
      cpu,
      detail: { ...seq },
    });
    return r.startsPerSec;
  });
}
