import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { killOnExit, onCleanup } from './lifecycle.js';

/**
 * A bench child: a TypeScript file run by its own Node process (tsx loader), spoken to over IPC with a
 * tiny request/answer protocol (bench/children/ipc.ts). Each is stopped by cleanup, SIGKILLed on exit.
 */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const STOP_GRACE_MS = 5_000;
const READY_TIMEOUT_MS = 60_000;

/** The ready message of a child that tells nothing but that it is ready (serve(handlers, {})). */
export type ReadyOnly = Record<string, never>;

export interface BenchChild<Ready> {
  name: string;
  pid: number;
  ready: Ready;
  request<T>(type: string, arg?: unknown): Promise<T>;
  stop(): Promise<void>;
}

/** Signals a process and waits for it to exit; SIGKILL after the grace time. */
export function stopProcess(
  child: ChildProcess,
  signal: NodeJS.Signals = 'SIGTERM',
  graceMs = STOP_GRACE_MS,
): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill(signal);
  });
}

export async function startChild<Ready>(
  name: string,
  file: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<BenchChild<Ready>> {
  const child = fork(path.join(REPO_ROOT, 'bench/children', file), [], {
    cwd: REPO_ROOT,
    env,
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  // A child that cannot be spawned or signalled: said, and its requests end with its exit or the ready timeout.
  child.on('error', (err) => process.stderr.write(`bench: ${name}: ${err.message}\n`));
  const forget = killOnExit(() => child.kill('SIGKILL'));
  const stop = onCleanup(`stop ${name}`, async () => {
    await stopProcess(child);
    forget();
  });

  let nextId = 1;
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let readyResolve: (v: Ready) => void = () => {};
  const ready = new Promise<Ready>((resolve) => (readyResolve = resolve));
  child.on('message', (msg: { type?: string; id?: number; result?: unknown; error?: string; ready?: Ready }) => {
    if (msg.type === 'ready') readyResolve(msg.ready as Ready);
    else if (msg.id !== undefined) {
      const w = waiting.get(msg.id);
      waiting.delete(msg.id);
      if (msg.error !== undefined) w?.reject(new Error(`${name}: ${msg.error}`));
      else w?.resolve(msg.result);
    }
  });
  const exit = new Promise<Error>((resolve) =>
    child.once('exit', (code, signal) => {
      const err = new Error(`${name} exited (code ${code}, signal ${signal})`);
      for (const w of waiting.values()) w.reject(err);
      waiting.clear();
      resolve(err);
    }),
  );
  // A rejection made for each wait that races it, so that none is left without a handler when the child ends.
  const exited = () => exit.then((err) => Promise.reject(err));

  let timer: NodeJS.Timeout | undefined;
  const readyValue = await Promise.race([
    ready,
    exited(),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${name} not ready after ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
    }),
  ]).finally(() => clearTimeout(timer));

  return {
    name,
    pid: child.pid!,
    ready: readyValue,
    request<T>(type: string, arg?: unknown): Promise<T> {
      const id = nextId++;
      return Promise.race([
        new Promise<T>((resolve, reject) => {
          waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
          // With a callback, a closed channel is an error here, not an 'error' event that would crash us.
          child.send({ id, type, arg }, (err) => {
            if (!err) return;
            waiting.delete(id);
            reject(new Error(`${name}: ${err.message}`));
          });
        }),
        exited(),
      ]);
    },
    stop,
  };
}
