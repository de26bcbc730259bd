import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import type { Logger } from '../logger.js';

/** What the child tells its parent once its worker role runs (worker-child.ts). */
export interface WorkerReady {
  type: 'ready';
  catcherUrl: string | undefined;
  probeUrl: string | undefined;
}

export interface WorkerProcess {
  /** The running child's pid (it changes when the child is restarted). */
  pid(): number | undefined;
  ready: WorkerReady;
  stop(): Promise<void>;
}

export interface WorkerProcessOptions {
  /** The child's entry module (worker-child.ts, or .js when built). */
  entry: string;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** How long a stopping child may finish its deliveries before it is killed. */
  stopGraceMs?: number;
}

/** Lowers the priority of every thread of `child` (on Linux, nice is per thread), or of the process elsewhere. */
function lowerPriority(child: ChildProcess, logger: Logger): void {
  if (child.pid === undefined) return;
  let ids = [child.pid];
  try {
    ids = fs.readdirSync(`/proc/${child.pid}/task`).map(Number);
  } catch {
    // Not Linux: the process's priority is all there is.
  }
  const nice = Math.min(19, os.getPriority() + WORKER_NICE);
  for (const id of ids) {
    try {
      os.setPriority(id, nice);
    } catch (err) {
      // A thread may have ended since it was listed.
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH')
        logger.warn({ err }, "could not lower the worker process's priority");
    }
  }
}

/**
 * The worker's scheduling priority below the API's (a nice value; raising it needs no privilege). When the
 * cores are busy the kernel then runs the API's requests first, so that accept latency stays low while
 * delivery runs; delivery gets every cycle the API leaves, and the API leaves most of them below its
 * maximum rate.
 */
const WORKER_NICE = 10;
const RESTART_FIRST_MS = 1_000;
const RESTART_MAX_MS = 30_000;
/** A child that ran this long before dying starts again after the first wait, not a longer one. */
const STABLE_MS = 60_000;

/**
 * The young generation's semi-space the worker runs with (MB; V8's default is 16). A delivery holds its message,
 * rows and SMTP state across a few round trips, and hundreds are in flight: with the default, many are still
 * live at each scavenge, get copied, promoted and later marked and compacted. With 64 MB most are garbage by
 * then, and the worker delivered about 9 % more per second in the bench's drain (docs/benchmark.md, "Session
 * 25"), for up to 160 MB more resident memory under load (its peak in the bench's max-rate run: 517 -> 680 MB).
 * A flag given by the operator (the parent's execArgv or NODE_OPTIONS) wins.
 */
export const WORKER_SEMI_SPACE_MB = 64;

/** The worker child's Node flags: the parent's (tsx, profiling), and the semi-space size unless they set one. */
export function workerExecArgv(parent: readonly string[], nodeOptions: string | undefined): string[] {
  const given = [...parent, ...(nodeOptions ?? '').split(/\s+/)].some((flag) =>
    /^--max[-_]semi[-_]space[-_]size(=|$)/.test(flag),
  );
  return given ? [...parent] : [...parent, `--max-semi-space-size=${WORKER_SEMI_SPACE_MB}`];
}

/**
 * The worker role in a child process, supervised: started with the parent's Node flags (tsx, profiling) and
 * stdout/stderr, restarted with a growing wait whenever it dies on its own, stopped (SIGTERM, then SIGKILL
 * after the grace) when the parent stops. Resolves once the first child says it is ready; rejects if that
 * child exits first (bad settings fail the start, as in one process).
 */
export async function startWorkerProcess(options: WorkerProcessOptions): Promise<WorkerProcess> {
  const { logger } = options;
  const grace = options.stopGraceMs ?? 20_000;
  let child: ChildProcess | undefined;
  let stopping = false;
  let restartWait = RESTART_FIRST_MS;
  let restartTimer: NodeJS.Timeout | undefined;

  const spawnChild = () => {
    const c = fork(options.entry, [], {
      env: options.env,
      execArgv: workerExecArgv(process.execArgv, options.env.NODE_OPTIONS),
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    lowerPriority(c, logger);
    // Threads the child starts later inherit the main thread's priority; those it started already get it here.
    c.on('message', (m: WorkerReady) => {
      if (m?.type === 'ready') lowerPriority(c, logger);
    });
    return c;
  };

  const supervise = (c: ChildProcess) => {
    const startedAt = Date.now();
    c.once('exit', (code, signal) => {
      if (child === c) child = undefined;
      if (stopping) return;
      if (Date.now() - startedAt > STABLE_MS) restartWait = RESTART_FIRST_MS;
      logger.error({ code, signal, restartInMs: restartWait }, 'the worker process exited; starting it again');
      restartTimer = setTimeout(() => {
        restartTimer = undefined;
        if (stopping) return;
        child = spawnChild();
        supervise(child);
      }, restartWait);
      restartWait = Math.min(restartWait * 2, RESTART_MAX_MS);
    });
  };

  child = spawnChild();
  const first = child;
  const ready = await new Promise<WorkerReady>((resolve, reject) => {
    first.on('message', (m: WorkerReady) => {
      if (m?.type === 'ready') resolve(m);
    });
    first.once('exit', (code, signal) =>
      reject(new Error(`the worker process exited while starting (code ${code}, signal ${signal})`)),
    );
  });
  supervise(first);

  return {
    pid: () => child?.pid,
    ready,
    async stop() {
      stopping = true;
      clearTimeout(restartTimer);
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => c.once('exit', () => resolve()));
      c.kill('SIGTERM');
      const killer = setTimeout(() => {
        logger.warn({ graceMs: grace }, 'the worker process did not stop in time; killing it');
        c.kill('SIGKILL');
      }, grace);
      await exited;
      clearTimeout(killer);
    },
  };
}
