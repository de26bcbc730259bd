import { setTimeout as sleep } from 'node:timers/promises';
import type { BenchContext, PartContext } from './context.js';
import type { CpuUsage } from './cpu.js';
import { maxRate, type HttpRun, type HttpTarget } from './load.js';
import { EMAIL_BODY } from './payload.js';
import type { Row } from './report.js';
import { CONNECTIONS, RUN_S, WARMUP_S } from './settings.js';

/** The HTTP figures' common parts: the target, the row of a run, a closed-loop measurement, the drain of what was accepted. */

export function httpTarget(port: number, headers: Record<string, string> = {}): HttpTarget {
  return {
    url: `http://127.0.0.1:${port}/v1/mail/emails`,
    headers: { 'content-type': 'application/json', ...headers },
    body: EMAIL_BODY,
  };
}

export function httpRow(key: string, what: string, run: HttpRun, cpu: CpuUsage, notes: string[] = []): Row {
  const refused = Object.entries(run.statuses)
    .filter(([s]) => s !== '200')
    .map(([s, n]) => `${n} x ${s}`);
  if (refused.length > 0) notes.push(`non-200 answers: ${refused.join(', ')}`);
  if (run.errors > 0) notes.push(`${run.errors} connection errors (${run.timeouts} timeouts)`);
  return {
    key,
    what,
    value: run.okPerSec,
    unit: '200/s',
    p50: run.latencyMs.p50,
    p99: run.latencyMs.p99,
    cpu,
    notes,
    detail: { ...run, startedAt: undefined, endedAt: undefined },
  };
}

/** Warm-up, then the measured closed-loop run with its CPU window. */
export async function measureMax(
  ctx: PartContext,
  key: string,
  what: string,
  target: HttpTarget,
  connections = CONNECTIONS,
): Promise<{ run: HttpRun; cpu: CpuUsage }> {
  await maxRate(`${key} warm-up`, target, connections, WARMUP_S);
  const w = ctx.window();
  const run = await maxRate(key, target, connections, RUN_S);
  const cpu = w.stop();
  ctx.addRow(httpRow(key, what, run, cpu));
  return { run, cpu };
}

export interface Drain {
  atStart: number;
  delivered: number;
  drainS: number;
  complete: boolean;
  cpu: CpuUsage;
  duplicates: number;
}

/**
 * Waits until the sink has `expected` more messages than at `before`, at most `capMs`; measures the
 * CPU of the wait (delivery alone, no more accepts).
 */
export async function drain(ctx: BenchContext, before: number, expected: number, capMs: number): Promise<Drain> {
  const w = ctx.window();
  const start = performance.now();
  let now = await ctx.infra.sinkCount();
  const atStart = now.total - before;
  while (now.total - before < expected && performance.now() - start < capMs) {
    await sleep(100);
    now = await ctx.infra.sinkCount();
  }
  const cpu = w.stop();
  return {
    atStart,
    delivered: now.total - before,
    drainS: (performance.now() - start) / 1000,
    complete: now.total - before >= expected,
    cpu,
    duplicates: now.duplicates,
  };
}

/** Until the sink has received nothing for 1 s (at most `capMs`). */
export async function untilSinkQuiet(ctx: BenchContext, capMs = 15_000): Promise<void> {
  let last = (await ctx.infra.sinkCount()).total;
  for (let quietFor = 0, waited = 0; quietFor < 1_000 && waited < capMs; waited += 250) {
    await sleep(250);
    const now = (await ctx.infra.sinkCount()).total;
    quietFor = now === last ? quietFor + 250 : 0;
    last = now;
  }
}
