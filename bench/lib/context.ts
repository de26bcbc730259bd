import path from 'node:path';
import { cpuWindow, pidsMatching, type CpuGroup, type CpuUsage } from './cpu.js';
import type { Infrastructure } from './infrastructure.js';
import type { BenchChild } from './children.js';
import type { Part } from './parts.js';
import { cpuPerCount, cpuPerUnit, limitFromCpu, NOISY_OTHER, type Row } from './report.js';
import type { Sizes } from './settings.js';

/** A process the bench measures; the service's processes also count the warnings and errors they logged. */
export interface Measured {
  pid: number;
  problems?(): { count: number; last: string[] };
}

/**
 * What the parts share, passed to each: the selection and sizes, the clock and budget, the infrastructure,
 * and the processes under test (whose CPU the `server` and `worker` columns show).
 */
export interface BenchContext {
  parts: Set<Part>;
  sizes: Sizes;
  infra: Infrastructure;
  log(msg: string): void;
  /** Milliseconds since the bench started. */
  elapsed(): number;
  /** Milliseconds left in the bench's time budget. */
  remaining(): number;
  /**
   * A time planned for the machine the budget is sized for (settings.ts, BUDGET_REFERENCE_SIGNED_PER_S), on
   * this one: stretched as the budget is once the baselines showed this machine slower.
   */
  planned(ms: number): number;
  /** The server under test (the service's API process when it runs split) and the service's separate worker. */
  underTest: { server?: Measured; worker?: Measured };
  /** A CPU window over every group. */
  window(): { stop(): CpuUsage };
  cpuColumns: string[];
  /** Groups that are one Node thread: at a full core, that thread bounds the figure. */
  nodeThreads: string[];
}

/** A part's own view of the context: the rows it has measured so far, which it returns. */
export interface PartContext extends BenchContext {
  rows: Row[];
  /** Adds a row with what bounds it and its CPU per unit, and logs it as it is measured. */
  addRow(row: Row): void;
  /** The same, with a note of the warnings and errors the service under test logged so far. */
  addServiceRow(row: Row): void;
}

/** What a part returns: its rows, in the order measured, and the figures the targets are judged on. */
export interface PartResult<F> {
  rows: Row[];
  figures: F;
}

export function createContext(
  base: Pick<BenchContext, 'parts' | 'sizes' | 'infra' | 'log' | 'elapsed' | 'remaining' | 'planned'>,
): BenchContext {
  const underTest: BenchContext['underTest'] = {};
  const pid = (p: Measured | undefined) => (p ? [p.pid] : []);
  const temporalPids = pidsMatching(path.join(base.infra.tmp, 'temporal.db'));
  const groups: CpuGroup[] = [
    { name: 'server', pids: () => pid(underTest.server) },
    { name: 'srv-js', pids: () => pid(underTest.server), mainThread: true },
    { name: 'worker', pids: () => pid(underTest.worker) },
    { name: 'wrk-js', pids: () => pid(underTest.worker), mainThread: true },
    { name: 'postgres', pids: () => [base.infra.pgPid], descendants: true },
    { name: 'temporal', pids: () => temporalPids },
    { name: 'sink', pids: () => [base.infra.sink.pid] },
    { name: 'bench', pids: () => [process.pid] },
  ];
  return {
    ...base,
    underTest,
    nodeThreads: ['srv-js', 'wrk-js', 'sink', 'bench'],
    cpuColumns: groups.map((g) => g.name),
    window: () => cpuWindow(groups),
  };
}

export function partContext(ctx: BenchContext): PartContext {
  const rows: Row[] = [];
  const addRow = (row: Row) => {
    if (row.cpu && !row.limit) row.limit = limitFromCpu(row.cpu, ctx.nodeThreads);
    if (row.cpu) {
      row.notes = [
        ...(row.notes ?? []),
        row.cpuUnits ? cpuPerCount(row.cpu, row.cpuUnits) : cpuPerUnit(row.cpu, row.value),
      ].filter((n) => n !== '');
      if (row.cpu.other >= NOISY_OTHER)
        row.notes.push(
          `NOISY: other processes used ${row.cpu.other}% of a core during this figure; it understates this machine`,
        );
    }
    rows.push(row);
    ctx.log(
      `${row.what}: ${row.value} ${row.unit}${row.p99 !== undefined && !Number.isNaN(row.p99) ? ` (p50 ${row.p50} ms, p99 ${row.p99} ms)` : ''}`,
    );
  };
  return {
    ...ctx,
    rows,
    addRow,
    addServiceRow: (row) => {
      const { server, worker } = ctx.underTest;
      const problems = [server, worker].map((p) => p?.problems?.()).filter((p) => p && p.count > 0);
      if (problems.length > 0)
        row.notes = [
          ...(row.notes ?? []),
          `service logged ${problems.reduce((n, p) => n + p!.count, 0)} warnings/errors so far; last: ${problems.at(-1)!.last.at(-1)}`,
        ];
      addRow(row);
    },
  };
}

/**
 * Runs `fn` with `server` as the server under test, then stops it. A service that runs its worker in a
 * child process of its own (`npm start`'s shape) has that child measured as the worker.
 */
export async function measuring<S extends Measured & { stop(): Promise<void>; workerPid?: number }, T>(
  ctx: BenchContext,
  server: S,
  fn: (server: S) => Promise<T>,
): Promise<T> {
  ctx.underTest.server = server;
  if (server.workerPid !== undefined) ctx.underTest.worker = { pid: server.workerPid };
  try {
    return await fn(server);
  } finally {
    await server.stop();
    ctx.underTest.server = undefined;
    if (server.workerPid !== undefined) ctx.underTest.worker = undefined;
  }
}

/** What the job and webhook figures need of the context. */
export interface JobsContext {
  sink: BenchChild<{ url: string }>;
  log: (msg: string) => void;
  window: () => { stop(): CpuUsage };
  addRow: (row: Row) => void;
  /** Milliseconds left in the bench's time budget. */
  remaining: () => number;
  /**
   * When each scheduled email with a subject starting with `prefix` fired (the service's own record, read
   * from its database; rejects when that cannot be read): splits lateness into firing and delivery.
   */
  firedAt?: (prefix: string) => Promise<Map<string, number>>;
  /**
   * Runs `fn` with `measured` in the `server` columns instead of the service's API process (a baseline's
   * process measured between the service's figures, as the baselines part measures its own); then puts it back.
   */
  asServer<T>(measured: Measured, fn: () => Promise<T>): Promise<T>;
}

/** What the job and webhook figures need of the context; their rows note the service's warnings. */
export function jobsContext(ctx: PartContext, firedAt?: JobsContext['firedAt']): JobsContext {
  return {
    sink: ctx.infra.sink,
    log: ctx.log,
    window: ctx.window,
    remaining: ctx.remaining,
    addRow: ctx.addServiceRow,
    ...(firedAt ? { firedAt } : {}),
    asServer: async (measured, fn) => {
      const service = ctx.underTest.server;
      ctx.underTest.server = measured;
      try {
        return await fn();
      } finally {
        ctx.underTest.server = service;
      }
    },
  };
}
