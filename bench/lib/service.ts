import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT, stopProcess } from './children.js';
import { killOnExit, onCleanup } from './lifecycle.js';

/**
 * The service under test: `src/start.ts` in a child process of its own (as `npm start` runs it), over
 * the bench's PostgreSQL database, Temporal dev server and SMTP sink. Its first start prints the seeded
 * account and API key; the management API (admin token) does the rest.
 */
export interface ServiceProcess {
  /** What the process is called in logs and errors ("service", "service worker"). */
  name: string;
  pid: number;
  /** Warning and error log lines seen so far (pino levels 40+), and the last few of them. */
  problems(): { count: number; last: string[] };
  stop(): Promise<void>;
}

export interface ServiceHandle extends ServiceProcess {
  /** http://127.0.0.1:PORT */
  baseUrl: string;
  apiKey: string;
  accountId: string;
  adminToken: string;
  /** The inbound listener (smtp://host:port), from the banner. */
  inboundUrl?: string;
  /** The worker child of a split `npm start` (MAILER_ROLE=all with MAILER_WORKER_PROCESS): its pid, from the banner. */
  workerPid?: number;
}

const START_TIMEOUT_MS = 90_000;

/**
 * The checkout whose service is measured: this one, or BENCH_SERVICE_ROOT (another checkout, e.g. the
 * last commit unpacked with `git archive HEAD | tar -x -C DIR` and a node_modules symlink) to compare a
 * change against the same baselines.
 */
export const SERVICE_ROOT = process.env.BENCH_SERVICE_ROOT ? path.resolve(process.env.BENCH_SERVICE_ROOT) : REPO_ROOT;

/**
 * Runs `src/start.ts` and waits for its banner. `preload` files are imported (after tsx) before the
 * service, `nodeArgs` go first (BENCH_SERVICE_NODE_ARGS is added to them).
 */
async function spawnService(
  name: string,
  env: Record<string, string>,
  extra: { nodeArgs?: string[]; preload?: string[] } = {},
): Promise<ServiceProcess & { banner: string }> {
  // BENCH_SERVICE_NODE_ARGS: extra Node flags for the service only, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
  const nodeArgs = [
    ...(process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(/\s+/).filter(Boolean),
    ...(extra.nodeArgs ?? []),
  ];
  const preload = (extra.preload ?? []).flatMap((file) => ['--import', file]);
  const child: ChildProcess = spawn(
    process.execPath,
    [...nodeArgs, '--import', 'tsx', ...preload, path.join(SERVICE_ROOT, 'src/start.ts')],
    {
      cwd: SERVICE_ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const forget = killOnExit(() => child.kill('SIGKILL'));
  const stop = onCleanup(`stop the ${name}`, async () => {
    await stopProcess(child, 'SIGTERM', 10_000);
    forget();
  });

  let out = '';
  let problemCount = 0;
  const lastProblems: string[] = [];
  let pending = '';
  const onLine = (line: string) => {
    // BENCH_SERVICE_ECHO=1: show everything the service writes (its warnings are counted either way).
    if (process.env.BENCH_SERVICE_ECHO) process.stderr.write(`${name}: ${line}\n`);
    if (out.length < 20_000) out += `${line}\n`;
    const level = /"level":(\d+)/.exec(line)?.[1];
    if (level !== undefined && Number(level) >= 40) {
      problemCount += 1;
      lastProblems.push(line.slice(0, 600));
      if (lastProblems.length > 5) lastProblems.shift();
    }
  };
  // Read everything the service writes, always: a full pipe would block its event loop.
  const onData = (d: Buffer) => {
    pending += d.toString();
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    lines.forEach(onLine);
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);

  const started = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the ${name} did not start in ${START_TIMEOUT_MS} ms:\n${out}`)),
      START_TIMEOUT_MS,
    );
    const check = setInterval(() => {
      if (out.includes('Ctrl-C stops everything.')) {
        clearTimeout(timer);
        clearInterval(check);
        resolve();
      }
    }, 50);
    child.once('exit', (code) => {
      clearTimeout(timer);
      clearInterval(check);
      reject(new Error(`the ${name} exited (code ${code}) while starting:\n${out}`));
    });
  });
  await started;

  return {
    name,
    pid: child.pid!,
    banner: out,
    problems: () => ({ count: problemCount, last: [...lastProblems] }),
    stop,
  };
}

/**
 * The service with its REST API (MAILER_ROLE all, the default, or api), on a database it is the first
 * to use: its banner shows the seeded account and API key.
 */
export async function startService(
  env: Record<string, string>,
  extra: { name?: string; nodeArgs?: string[]; preload?: string[] } = {},
): Promise<ServiceHandle> {
  const { banner, ...proc } = await spawnService(extra.name ?? 'service', env, extra);
  const rest = /REST API\s+(http:\/\/\S+)\/v1\/mail/.exec(banner)?.[1];
  // The line that starts with it: the console line mentions "an API key" too.
  const apiKey = /^\s*API key\s+(mk_\S+)/m.exec(banner)?.[1];
  const accountId = /Account\s+(\S+)/.exec(banner)?.[1];
  if (!rest || !apiKey || !accountId)
    throw new Error(`could not read the REST URL, account and API key from the ${proc.name}'s banner:\n${banner}`);
  const workerPid = Number(/the worker in process (\d+)/.exec(banner)?.[1] ?? NaN);
  const inboundUrl = /(?:Reports in|Inbound MX)\s+(smtp:\/\/\S+)/.exec(banner)?.[1];
  return {
    ...proc,
    baseUrl: rest,
    apiKey,
    accountId,
    adminToken: env.MAILER_ADMIN_TOKEN!,
    ...(inboundUrl !== undefined ? { inboundUrl } : {}),
    ...(workerPid > 0 ? { workerPid } : {}),
  };
}

/** The service with MAILER_ROLE=worker: the Temporal worker and the dispatcher, no API. */
export async function startWorker(
  env: Record<string, string>,
  extra: { name?: string; nodeArgs?: string[]; preload?: string[] } = {},
): Promise<ServiceProcess> {
  const { banner: _banner, ...proc } = await spawnService(
    extra.name ?? 'service worker',
    { ...env, MAILER_ROLE: 'worker' },
    extra,
  );
  return proc;
}

/** A management API call with the admin token; throws on anything but 2xx. */
export async function admin<T>(service: ServiceHandle, method: string, pathname: string, body?: unknown): Promise<T> {
  const res = await fetch(`${service.baseUrl}/v1/mail/admin${pathname}`, {
    method,
    headers: { authorization: `Bearer ${service.adminToken}`, 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${pathname}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

/** Accounts that may send without limit: the seeded one plus `extra` more, each with a verified domain and a key. */
export async function prepareAccounts(
  service: ServiceHandle,
  domain: string,
  extra: number,
): Promise<{ accountId: string; apiKey: string }[]> {
  const QUOTA = 100_000_000;
  await admin(service, 'PATCH', `/accounts/${service.accountId}`, { daily_quota: QUOTA });
  const accounts = [{ accountId: service.accountId, apiKey: service.apiKey }];
  for (let i = 1; i <= extra; i += 1) {
    const account = await admin<{ id: string }>(service, 'POST', '/accounts', { name: `bench ${i}` });
    await admin(service, 'PATCH', `/accounts/${account.id}`, { daily_quota: QUOTA });
    const d = await admin<{ id: string }>(service, 'POST', `/accounts/${account.id}/domains`, { name: domain });
    await admin(service, 'POST', `/domains/${d.id}/verify`, { force: true });
    const key = await admin<{ key: string }>(service, 'POST', `/accounts/${account.id}/api-keys`, {
      name: 'bench',
      permission: 'all',
    });
    accounts.push({ accountId: account.id, apiKey: key.key });
  }
  return accounts;
}
