import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import type { Logger } from '../logger.js';
import { makePrivateDir, withPrivateUmask } from '../private-dir.js';

/**
 * The Temporal dev server for `npm start` and the tests when TEMPORAL_ADDRESS is unset, found in the order
 * CONTRACT.md gives: TEMPORAL_CLI_PATH, `temporal` on PATH, the per-user cache, a one-time `go install`
 * into that cache. Its SQLite file lives in the data dir, so scheduled work survives restarts.
 */
export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';
const READY_TIMEOUT_MS = 60_000;
const BUILD_LOCK_STALE_MS = 30 * 60_000;

export interface DevServer {
  address: string;
  uiUrl: string | undefined;
  stop(): Promise<void>;
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    await fs.access(file, fs.constants.X_OK);
    return (await fs.stat(file)).isFile();
  } catch {
    return false;
  }
}

async function onPath(name: string, pathVar: string): Promise<string | undefined> {
  for (const dir of pathVar.split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, name);
    if (await isExecutable(candidate)) return candidate;
  }
  return undefined;
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** Builds the CLI into the cache once; concurrent callers (two clones, a test run) wait for one build. */
async function buildIntoCache(cacheDir: string, env: NodeJS.ProcessEnv, logger: Logger): Promise<string | undefined> {
  const go = await onPath('go', env.PATH ?? '');
  if (!go) return undefined;
  const target = path.join(cacheDir, 'temporal');
  const lock = path.join(cacheDir, '.temporal-build.lock');
  await fs.mkdir(cacheDir, { recursive: true });
  for (;;) {
    try {
      await fs.mkdir(lock);
      break;
    } catch {
      const age =
        Date.now() -
        (await fs.stat(lock).then(
          (s) => s.mtimeMs,
          () => Date.now(),
        ));
      if (age > BUILD_LOCK_STALE_MS) await fs.rm(lock, { recursive: true, force: true });
      else await new Promise((r) => setTimeout(r, 2000));
      if (await isExecutable(target)) return target;
    }
  }
  try {
    if (await isExecutable(target)) return target;
    logger.info(
      { module: TEMPORAL_CLI_MODULE, into: cacheDir },
      'building the Temporal dev server once with go install (this takes a few minutes)',
    );
    const started = Date.now();
    const { code, output } = await run(go, ['install', TEMPORAL_CLI_MODULE], {
      ...env,
      GOBIN: cacheDir,
      GOFLAGS: '-mod=mod',
    });
    if (code !== 0 || !(await isExecutable(target))) {
      logger.error({ output: output.slice(-4000) }, 'go install of the Temporal CLI failed');
      return undefined;
    }
    logger.info({ seconds: Math.round((Date.now() - started) / 1000) }, 'Temporal CLI built');
    return target;
  } finally {
    await fs.rm(lock, { recursive: true, force: true });
  }
}

/** Finds (or builds) the `temporal` CLI; undefined when none can be had here. */
export async function locateTemporalCli(options: {
  cliPath: string | undefined;
  cacheDir: string;
  env: NodeJS.ProcessEnv;
  logger: Logger;
}): Promise<string | undefined> {
  if (options.cliPath) {
    if (await isExecutable(options.cliPath)) return options.cliPath;
    throw new Error(`TEMPORAL_CLI_PATH=${options.cliPath} is not an executable file`);
  }
  const fromPath = await onPath('temporal', options.env.PATH ?? '');
  if (fromPath) return fromPath;
  const cached = path.join(options.cacheDir, 'temporal');
  if (await isExecutable(cached)) return cached;
  return buildIntoCache(options.cacheDir, options.env, options.logger);
}

async function reachable(address: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      try {
        await connection.workflowService.getSystemInfo({});
        return true;
      } finally {
        await connection.close();
      }
    } catch {
      if (Date.now() >= deadline) return false;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

export async function startDevServer(options: {
  cli: string;
  dataDir: string;
  port: number;
  namespace: string;
  ui: boolean;
  logger: Logger;
}): Promise<DevServer> {
  const { cli, port, logger } = options;
  const address = `127.0.0.1:${port}`;
  const uiUrl = options.ui ? `http://127.0.0.1:${port + 1}` : undefined;
  // One left running by a killed earlier run of this data dir holds the database file: use it.
  if (await reachable(address, 300)) {
    logger.warn({ address }, 'a Temporal server already answers on the embedded port; reusing it');
    return { address, uiUrl, stop: async () => {} };
  }
  await makePrivateDir(options.dataDir);
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--db-filename',
    path.join(options.dataDir, 'temporal.db'),
    '--namespace',
    options.namespace,
    '--log-level',
    'warn',
    // WAL and NORMAL sync: several times more workflow starts per second on SQLite, still crash-safe.
    '--sqlite-pragma',
    'journal_mode=WAL',
    '--sqlite-pragma',
    'synchronous=NORMAL',
    ...(options.ui ? ['--ui-port', String(port + 1)] : ['--headless']),
  ];
  // Under umask 077: temporal.db (every workflow's input: addresses, subjects) is the owner's only.
  const child: ChildProcess = withPrivateUmask(() => spawn(cli, args, { stdio: ['ignore', 'pipe', 'pipe'] }));
  let output = '';
  const keep = (d: Buffer) => {
    output = (output + d.toString()).slice(-8000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const ready = await Promise.race([reachable(address, READY_TIMEOUT_MS), exited.then(() => false)]);
  if (!ready) {
    child.kill('SIGKILL');
    throw new Error(`the Temporal dev server did not start on ${address}:\n${output}`);
  }
  logger.info({ address, ui: uiUrl }, 'Temporal dev server started');
  return {
    address,
    uiUrl,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
