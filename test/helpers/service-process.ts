import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { eventually } from './http.js';
import { freePort } from './ports.js';
import { startSmtpSink } from './smtp-sink.js';
import { createTestDatabase, stackEnv } from './stack.js';

/** The service as child processes, as in production, for tests that kill them (durability tests). */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface Child {
  name: string;
  proc: ChildProcess;
  output: string[];
  exited: Promise<void>;
  alive: boolean;
}

const children = new Set<Child>();
// Should the test process die without running afterAll, take the service processes with it.
process.once('exit', () => {
  for (const c of children) if (c.alive) c.proc.kill('SIGKILL');
});

/** `node --import tsx src/start.ts` with `env`, its output kept for failure reports. */
export function spawnService(name: string, env: NodeJS.ProcessEnv): Child {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/start.ts'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const child: Child = { name, proc, output: [], exited: Promise.resolve(), alive: true };
  const keep = (chunk: Buffer) => {
    child.output.push(
      ...chunk
        .toString()
        .split('\n')
        .filter((l) => l !== ''),
    );
    if (child.output.length > 300) child.output.splice(0, child.output.length - 300);
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  child.exited = new Promise((resolve) =>
    proc.once('exit', (code, signal) => {
      child.alive = false;
      child.output.push(`[exited: code ${code}, signal ${signal}]`);
      resolve();
    }),
  );
  children.add(child);
  return child;
}

/** SIGKILL: no shutdown code runs, sockets are torn down by the kernel. Resolves once the process is gone. */
export async function kill(child: Child): Promise<void> {
  if (child.alive) child.proc.kill('SIGKILL');
  await child.exited;
}

export async function killAll(): Promise<void> {
  await Promise.all([...children].map(kill));
  children.clear();
}

/** The last lines of every child's output, for a failing test's report. */
export function childLogs(): string {
  return [...children]
    .map((c) => `--- ${c.name} (pid ${c.proc.pid}) ---\n${c.output.slice(-80).join('\n')}`)
    .join('\n');
}

export async function waitReady(baseUrl: string, child: Child): Promise<void> {
  await eventually(
    async () => {
      if (!child.alive) throw new Error(`${child.name} exited:\n${child.output.slice(-40).join('\n')}`);
      const res = await fetch(`${baseUrl}/readyz`).catch(() => undefined);
      return res?.status === 200;
    },
    60_000,
    100,
  );
}

/**
 * What one "deployment" under test needs: a fresh database, task queue, data dir and receiving SMTP
 * server, fixed ports, and the environment of each role's process.
 */
export async function createDeployment(name: string, extra: Record<string, string> = {}) {
  const sink = await startSmtpSink({ parse: false });
  const databaseUrl = await createTestDatabase();
  const taskQueue = `${name}-${crypto.randomBytes(4).toString('hex')}`;
  const dataDir = path.join(inject('tmpRoot'), taskQueue);
  await fs.mkdir(dataDir, { recursive: true });
  const port = await freePort();
  const grpcPort = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    sink,
    databaseUrl,
    dataDir,
    baseUrl,
    api: `${baseUrl}/v1/mail`,
    env: (role: 'api' | 'worker' | 'all') =>
      stackEnv(databaseUrl, sink.url, taskQueue, dataDir, {
        MAILER_ROLE: role,
        PORT: String(port),
        GRPC_PORT: String(grpcPort),
        ...extra,
      }),
  };
}
