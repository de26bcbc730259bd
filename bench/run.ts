import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import postgres from 'postgres';
import { loadConfig } from '../src/config.js';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.js';
import { migrate } from '../src/db/migrate.js';
import { createSql } from '../src/db/sql.js';
import { createLogger } from '../src/logger.js';
import { locateTemporalCli, startDevServer } from '../src/temporal/dev-server.js';
import { freePort } from '../test/helpers/ports.js';
import { REPO_ROOT, startChild } from './lib/children.js';
import { cpuWindow, pidsMatching, type CpuGroup, type CpuUsage } from './lib/cpu.js';
import { cleanupAll, installSignalHandlers, onCleanup } from './lib/lifecycle.js';
import { fixedRate, maxRate, type HttpRun, type HttpTarget } from './lib/load.js';
import { EMAIL_BODY, SENDER_DOMAIN } from './lib/payload.js';
import { cpuPerUnit, limitFromCpu, NOISY_OTHER, renderTable, renderTargets, type Row, type Target } from './lib/report.js';
import { prepareAccounts, SERVICE_ROOT, startService, type ServiceHandle } from './lib/service.js';
import { measureStarts } from './lib/temporal-starts.js';

/**
 * `npm run bench`: the service's accept and delivery rates against baselines measured in the same run on
 * the same machine (README of this folder). Everything it starts lives under one temp dir and is
 * stopped and removed at the end, on error, at the deadline and on Ctrl-C.
 */

// Every HTTP figure: 10 s of load after a 2 s warm-up (JIT, pools, connections) that is not counted.
const RUN_S = 10;
const WARMUP_S = 2;
// 32 keep-alive connections with one request each in flight: enough to keep a one-thread server and a
// 40-connection pool busy (the service has at most a few round trips per request in flight), few enough
// that latency at the maximum rate is not mostly queueing in front of the server. The figures hardly
// move between 16 and 64 (bench/README.md).
const CONNECTIONS = 32;
// The service's transport: 8 pooled SMTP connections (src/main.ts). Its activities keep up to
// 32 x 16 sends queued on them; 64 queued sendMail calls keep the pool full all the time.
const SMTP_MAX_CONNECTIONS = 8;
const SMTP_IN_FLIGHT = 64;
const TEMPORAL_CONCURRENCY = 16;
const MANY_ACCOUNTS = 10;
// The whole bench ends by itself well inside 6 minutes: phases shorten their drain waits to fit, and a
// watchdog cleans up and exits at the hard limit whatever is going on.
const BUDGET_MS = 330_000;
const HARD_LIMIT_MS = 350_000;

const t0 = performance.now();
const elapsed = () => performance.now() - t0;
const remaining = () => BUDGET_MS - elapsed();
const log = (msg: string) => process.stdout.write(`[${(elapsed() / 1000).toFixed(0).padStart(3)} s] ${msg}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let interrupted: string | undefined;

async function main(): Promise<void> {
  installSignalHandlers((signal) => {
    interrupted = signal;
  });
  const watchdog = setTimeout(() => {
    process.stderr.write(`\nbench: hard time limit (${HARD_LIMIT_MS / 1000} s) reached; cleaning up\n`);
    void cleanupAll().finally(() => process.exit(2));
  }, HARD_LIMIT_MS);
  watchdog.unref();

  const logger = createLogger('warn', 'bench');
  const config = loadConfig(process.env);
  const cores = os.cpus().length;
  log(`mailer bench on ${cores} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}`);
  // The figures are only this machine's if nothing else runs: say so when something does.
  const idle = cpuWindow([]);
  await sleep(1000);
  const before = idle.stop().machineBusy;
  log(`machine busy before start: ${before}% of ${cores * 100}%${before >= NOISY_OTHER ? ' (NOT QUIET: other workloads will lower the figures)' : ''}`);

  // ---- Shared infrastructure: one temp dir, PostgreSQL, Temporal, workflow bundles, SMTP sink -------------
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mailer-bench-'));
  onCleanup('remove the temp dir', () => fs.rm(tmp, { recursive: true, force: true }));
  // Run as root, embedded PostgreSQL runs as the `postgres` user, who must be able to enter this dir.
  await fs.chmod(tmp, 0o755);

  const postmasterPid = async () => Number((await fs.readFile(path.join(tmp, 'postgres', 'postmaster.pid'), 'latin1')).split('\n')[0]);
  const [pg, temporal, bundles, sink] = await Promise.all([
    (async () => {
      const h = await startEmbeddedPostgres({ dataDir: tmp, port: await freePort(), database: 'bench_baseline', logger });
      const pid = await postmasterPid();
      // embedded-postgres waits for an exit that never comes if the server is gone already (Ctrl-C
      // reaches it too, and it stops by itself).
      onCleanup('stop PostgreSQL', async () => {
        if (alive(pid)) await Promise.race([h.stop(), sleep(10_000)]);
      });
      return h;
    })(),
    (async () => {
      const cli = await locateTemporalCli({ cliPath: config.temporalCliPath, cacheDir: config.cacheDir, env: process.env, logger });
      if (!cli) throw new Error('no Temporal CLI: install Go (it is built once) or set TEMPORAL_CLI_PATH');
      const dev = await startDevServer({ cli, dataDir: tmp, port: await freePort(), namespace: 'default', ui: false, logger });
      onCleanup('stop the Temporal dev server', dev.stop);
      return dev;
    })(),
    (async () => {
      // The prebuilt bundle production would load (src/temporal/worker.ts bundles the same entry point).
      const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: (m: string) => console.error(m) };
      const bundle = async (workflowsPath: string, file: string) => {
        await fs.writeFile(file, (await bundleWorkflowCode({ workflowsPath, logger: quiet })).code);
        return file;
      };
      const [service, noop] = await Promise.all([
        bundle(path.join(SERVICE_ROOT, 'workflows/index.ts'), path.join(tmp, 'workflow-bundle.js')),
        bundle(path.join(REPO_ROOT, 'bench/workflows/noop.ts'), path.join(tmp, 'noop-bundle.js')),
      ]);
      return { service, noop };
    })(),
    startChild<{ url: string }>('smtp sink', 'sink.ts'),
  ]);
  const sinkCount = () => sink.request<{ total: number; duplicates: number }>('count');
  log(`PostgreSQL, Temporal dev server (${temporal.address}), SMTP sink (${sink.ready.url}) and workflow bundles ready`);

  // CPU groups: who used the cores during each window.
  let server: { pid: number } | undefined;
  const pgPid = await postmasterPid();
  const temporalPids = pidsMatching(path.join(tmp, 'temporal.db'));
  const groups: CpuGroup[] = [
    { name: 'server', pids: () => (server ? [server.pid] : []) },
    { name: 'srv-js', pids: () => (server ? [server.pid] : []), mainThread: true },
    { name: 'postgres', pids: () => [pgPid], descendants: true },
    { name: 'temporal', pids: () => temporalPids },
    { name: 'sink', pids: () => [sink.pid] },
    { name: 'bench', pids: () => [process.pid] },
  ];
  const cpuColumns = groups.map((g) => g.name);
  const nodeThreads = ['srv-js', 'sink', 'bench'];
  const window = () => cpuWindow(groups);

  const rows: Row[] = [];
  const addRow = (row: Row) => {
    if (row.cpu && !row.limit) row.limit = limitFromCpu(row.cpu, nodeThreads);
    if (row.cpu) {
      row.notes = [...(row.notes ?? []), cpuPerUnit(row.cpu, row.value)];
      if (row.cpu.other >= NOISY_OTHER) row.notes.push(`NOISY: other processes used ${row.cpu.other}% of a core during this figure; it understates this machine`);
    }
    rows.push(row);
    log(`${row.what}: ${row.value} ${row.unit}${row.p99 !== undefined ? ` (p50 ${row.p50} ms, p99 ${row.p99} ms)` : ''}`);
  };
  const httpRow = (key: string, what: string, run: HttpRun, cpu: CpuUsage, notes: string[] = []): Row => {
    const refused = Object.entries(run.statuses).filter(([s]) => s !== '200').map(([s, n]) => `${n} x ${s}`);
    if (refused.length > 0) notes.push(`non-200 answers: ${refused.join(', ')}`);
    if (run.errors > 0) notes.push(`${run.errors} connection errors (${run.timeouts} timeouts)`);
    return {
      key, what, value: run.okPerSec, unit: '200/s', p50: run.latencyMs.p50, p99: run.latencyMs.p99, cpu, notes,
      detail: { ...run, startedAt: undefined, endedAt: undefined },
    };
  };
  const httpTarget = (port: number, headers: Record<string, string> = {}): HttpTarget => ({
    url: `http://127.0.0.1:${port}/v1/mail/emails`,
    headers: { 'content-type': 'application/json', ...headers },
    body: EMAIL_BODY,
  });

  /** Warm-up, then the measured closed-loop run with its CPU window. */
  async function measureMax(key: string, what: string, target: HttpTarget, connections = CONNECTIONS): Promise<{ run: HttpRun; cpu: CpuUsage }> {
    await maxRate(`${key} warm-up`, target, connections, WARMUP_S);
    const w = window();
    const run = await maxRate(key, target, connections, RUN_S);
    const cpu = w.stop();
    addRow(httpRow(key, what, run, cpu));
    return { run, cpu };
  }

  // ---- Baseline 1: a no-op Fastify route ------------------------------------------------------------------
  {
    const child = await startChild<{ port: number }>('no-op server', 'noop-server.ts');
    server = child;
    await measureMax('noop', 'baseline: Fastify no-op route', httpTarget(child.ready.port));
    await child.stop();
    server = undefined;
  }

  // ---- Baseline 2: a Fastify route doing one INSERT of the same row into the service's emails table -------
  let insertRate: number;
  {
    const sql = createSql(pg.url, { max: 1 });
    await migrate(sql, logger);
    await sql`insert into accounts (id, name, daily_quota) values ('acc_bench', 'bench', 0)`;
    await sql.end();
    const child = await startChild<{ port: number }>('INSERT server', 'insert-server.ts', {
      ...process.env, BENCH_DATABASE_URL: pg.url, BENCH_ACCOUNT_ID: 'acc_bench',
    });
    server = child;
    insertRate = (await measureMax('insert', 'baseline: Fastify route + one INSERT', httpTarget(child.ready.port))).run.okPerSec;
    await child.stop();
    server = undefined;
  }

  // ---- Baseline 3: raw nodemailer pooled sends to the sink ------------------------------------------------
  let nodemailerRate: number;
  {
    const child = await startChild<object>('nodemailer sender', 'mail-sender.ts');
    server = child;
    const arg = { smtpUrl: sink.ready.url, maxConnections: SMTP_MAX_CONNECTIONS, inFlight: SMTP_IN_FLIGHT };
    await child.request('run', { ...arg, durationMs: WARMUP_S * 1000 });
    const before = await sinkCount();
    const w = window();
    const r = await child.request<{ sent: number; failed: number; elapsedMs: number; firstError?: string }>('run', { ...arg, durationMs: RUN_S * 1000 });
    const cpu = w.stop();
    await sleep(300);
    const after = await sinkCount();
    nodemailerRate = Math.round(r.sent / (r.elapsedMs / 1000));
    const notes = [`${SMTP_MAX_CONNECTIONS} pooled connections, ${SMTP_IN_FLIGHT} sendMail calls outstanding; sink received ${after.total - before.total} of ${r.sent} sent`];
    if (r.failed > 0) notes.push(`${r.failed} failed: ${r.firstError}`);
    addRow({ key: 'nodemailer', what: 'baseline: raw nodemailer pooled sends', value: nodemailerRate, unit: 'mails/s', cpu, notes, detail: r });
    await child.stop();
    server = undefined;
  }

  // ---- Baseline 4: Temporal dev server workflow starts ----------------------------------------------------
  let temporalStartRate: number;
  {
    const taskQueue = 'bench-noop';
    const child = await startChild<object>('Temporal worker', 'temporal-worker.ts', {
      ...process.env, BENCH_TEMPORAL_ADDRESS: temporal.address, BENCH_TASK_QUEUE: taskQueue, BENCH_WORKFLOW_BUNDLE: bundles.noop,
    });
    server = child;
    const connection = await Connection.connect({ address: temporal.address });
    onCleanup('close the Temporal client', () => connection.close());
    const client = new Client({ connection, namespace: 'default' });
    await measureStarts(client, taskQueue, TEMPORAL_CONCURRENCY, WARMUP_S * 1000, 5_000);
    let w = window();
    const r = await measureStarts(client, taskQueue, TEMPORAL_CONCURRENCY, RUN_S * 1000, 15_000);
    let cpu = w.stop();
    temporalStartRate = r.startsPerSec;
    const notes = [`${TEMPORAL_CONCURRENCY} starts in flight; ${r.completed ?? '?'} of ${r.started} completed ${r.completionWaitS ?? '?'} s after the last start`];
    if (r.failed > 0) notes.push(`${r.failed} failed: ${r.firstError}`);
    addRow({ key: 'temporal', what: `baseline: Temporal workflow starts (${TEMPORAL_CONCURRENCY} at once)`, value: r.startsPerSec, unit: 'starts/s', p50: r.startLatencyMs.p50, p99: r.startLatencyMs.p99, cpu, notes, detail: { ...r } });
    // One start at a time, as the service's dispatcher does: the latency of a start bounds how often it can start a group.
    w = window();
    const seq = await measureStarts(client, taskQueue, 1, 5_000, 5_000);
    cpu = w.stop();
    addRow({ key: 'temporal-seq', what: 'baseline: Temporal workflow starts (1 at a time)', value: seq.startsPerSec, unit: 'starts/s', p50: seq.startLatencyMs.p50, p99: seq.startLatencyMs.p99, cpu, detail: { ...seq } });
    await child.stop();
    server = undefined;
  }

  // ---- The service ------------------------------------------------------------------------------------------
  const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
  await admin`create database bench_service`;
  await admin.end();
  const service: ServiceHandle = await startService({
    DATABASE_URL: pg.url.replace(/\/bench_baseline$/, '/bench_service'),
    TEMPORAL_ADDRESS: temporal.address,
    SMTP_URL: sink.ready.url,
    PORT: '0',
    GRPC_PORT: '0',
    MAILER_DATA_DIR: path.join(tmp, 'service'),
    MAILER_WORKFLOW_BUNDLE: bundles.service,
    MAILER_RATE_LIMIT: '1000000',
    MAILER_ADMIN_TOKEN: 'adm_bench-admin-token-0123456789abcdef',
    LOG_LEVEL: 'warn',
  });
  server = service;
  const accounts = await prepareAccounts(service, SENDER_DOMAIN, MANY_ACCOUNTS - 1);
  const temporalConnection = await Connection.connect({ address: temporal.address });
  onCleanup('close the Temporal client', () => temporalConnection.close());
  const temporalClient = new Client({ connection: temporalConnection, namespace: 'default' });
  /** Delivery workflows the service has started so far (visibility: settles within a second or so). */
  const deliveryWorkflows = async () => {
    try {
      return (await temporalClient.workflow.count('WorkflowType = "deliverEmailsWorkflow"')).count;
    } catch {
      return NaN;
    }
  };
  const port = Number(new URL(service.baseUrl).port);
  const oneAccount = httpTarget(port, { authorization: `Bearer ${service.apiKey}` });
  log(`service started (pid ${service.pid}, ${service.baseUrl}${SERVICE_ROOT !== REPO_ROOT ? `, from ${SERVICE_ROOT}` : ''}); ${accounts.length} accounts with unlimited quota`);

  /**
   * Waits until the sink has `expected` more messages than at `before`, at most `capMs`; measures the
   * CPU of the wait (delivery alone, no more accepts).
   */
  async function drain(before: number, expected: number, capMs: number): Promise<{ atStart: number; delivered: number; drainS: number; complete: boolean; cpu: CpuUsage; duplicates: number }> {
    const w = window();
    const start = performance.now();
    let now = await sinkCount();
    const atStart = now.total - before;
    while (now.total - before < expected && performance.now() - start < capMs) {
      await sleep(100);
      now = await sinkCount();
    }
    const cpu = w.stop();
    return { atStart, delivered: now.total - before, drainS: (performance.now() - start) / 1000, complete: now.total - before >= expected, cpu, duplicates: now.duplicates };
  }

  /** A measured service run and the delivery of what it accepted. */
  async function serviceRun(key: string, what: string, load: () => Promise<HttpRun>, drainCapMs: number): Promise<{ run: HttpRun; deliveredPerSec: number }> {
    const before = (await sinkCount()).total;
    const workflowsBefore = await deliveryWorkflows();
    const whole = window();
    const w = window();
    const run = await load();
    const cpu = w.stop();
    const sent = run.ok;
    const d = await drain(before, sent, Math.max(5_000, drainCapMs));
    const wholeCpu = whole.stop();
    await sleep(1000);
    const workflows = (await deliveryWorkflows()) - workflowsBefore;
    const total = run.durationS + d.drainS;
    const deliveredPerSec = Math.round(d.delivered / total);
    const row = httpRow(key, what, run, cpu);
    row.notes!.push(
      `delivered ${d.delivered} of ${sent} accepted in ${run.durationS.toFixed(1)} s run + ${d.drainS.toFixed(1)} s drain` +
        (d.complete ? '' : ' (drain cut short by the time budget)'),
    );
    if (d.duplicates > 0) row.notes!.push(`${d.duplicates} duplicate Message-IDs at the sink`);
    if (workflows > 0) row.notes!.push(`${workflows} delivery workflows for ${sent} emails (${(sent / workflows).toFixed(1)} emails per workflow)`);
    const problems = service.problems();
    if (problems.count > 0) row.notes!.push(`service logged ${problems.count} warnings/errors so far; last: ${problems.last.at(-1)}`);
    addRow(row);
    addRow({
      key: `${key}-delivered`,
      what: `${what}: delivered to sink`,
      value: deliveredPerSec,
      unit: 'mails/s',
      cpu: wholeCpu,
      notes: [
        `${d.delivered} delivered over run + drain (${total.toFixed(1)} s): ${d.atStart} during the run ` +
          `(${Math.round(d.atStart / run.durationS)}/s while accepting), ${d.delivered - d.atStart} in the drain` +
          (d.drainS > 1 ? ` (${Math.round((d.delivered - d.atStart) / d.drainS)}/s with no accepts)` : ''),
        ...(d.drainS > 1 ? [`drain alone: ${limitFromCpu(d.cpu, nodeThreads)}`] : []),
      ],
      detail: { delivered: d.delivered, deliveredDuringRun: d.atStart, accepted: sent, runS: run.durationS, drainS: d.drainS, complete: d.complete, workflows, drainCpu: d.cpu },
    });
    return { run, deliveredPerSec };
  }

  // Warm-up: JIT, the pool's connections, the worker's workflow cache, the SMTP pool; then let it deliver.
  {
    const before = (await sinkCount()).total;
    const warm = await maxRate('service warm-up', oneAccount, CONNECTIONS, 3);
    const d = await drain(before, warm.ok, Math.min(45_000, remaining() - 150_000));
    log(`service warm-up: ${warm.ok} accepted, ${d.delivered} delivered in ${d.drainS.toFixed(1)} s`);
  }

  const max = await serviceRun('service', 'service: POST /v1/mail/emails, 1 account, max rate', () => maxRate('service', oneAccount, CONNECTIONS, RUN_S), Math.min(90_000, remaining() - 110_000));
  const halfRate = Math.max(1, Math.round(max.run.okPerSec / 2));
  const half = await serviceRun('service-half', `service: 1 account, fixed ${halfRate}/s (half max)`, () => fixedRate('service-half', oneAccount, halfRate, RUN_S), Math.min(45_000, remaining() - 60_000));

  let many: { run: HttpRun; deliveredPerSec: number } | undefined;
  if (remaining() > 35_000) {
    const target: HttpTarget = { ...oneAccount, headersPerConnection: accounts.map((a) => ({ authorization: `Bearer ${a.apiKey}` })) };
    many = await serviceRun('service-10acc', `service: ${accounts.length} accounts, max rate`, () => maxRate('service-10acc', target, CONNECTIONS, RUN_S), Math.min(60_000, remaining() - 15_000));
  } else {
    log('skipping the many-accounts run: not enough time left in the budget');
  }
  await service.stop();
  server = undefined;

  // ---- Targets -------------------------------------------------------------------------------------------
  const slowerBaseline = Math.min(insertRate, nodemailerRate);
  const targets: Target[] = [
    {
      name: 'accepted / (route + INSERT)', value: max.run.okPerSec / insertRate, target: '>= 0.70', met: max.run.okPerSec / insertRate >= 0.7,
      formula: `${max.run.okPerSec} / ${insertRate}`,
    },
    {
      name: 'p99 accept latency at half max rate (ms)', value: half.run.latencyMs.p99, target: '<= 25 ms', met: half.run.latencyMs.p99 <= 25,
      formula: `p99 of ${half.run.ok} sends at ${halfRate}/s (achieved ${half.run.okPerSec}/s)`,
    },
    {
      name: 'delivered / slower of (route + INSERT, raw nodemailer)', value: max.deliveredPerSec / slowerBaseline, target: '>= 0.5',
      met: max.deliveredPerSec / slowerBaseline >= 0.5,
      formula: `${max.deliveredPerSec} / min(${insertRate}, ${nodemailerRate})`,
    },
  ];

  // ---- Output ---------------------------------------------------------------------------------------------
  const out: string[] = [];
  out.push('', `Results (${RUN_S} s per figure after a ${WARMUP_S} s warm-up; HTTP: autocannon, ${CONNECTIONS} connections; CPU in % of one core, ${cores * 100}% = all cores)`, '');
  out.push(renderTable(rows, cpuColumns), '');
  out.push('What bounds each figure:');
  for (const r of rows) {
    out.push(`  ${r.what}`);
    if (r.limit) out.push(`      limit: ${r.limit}`);
    for (const n of r.notes ?? []) out.push(`      ${n}`);
  }
  out.push('', 'Targets:', renderTargets(targets));
  if (many) out.push(`  (info) ${accounts.length} accounts vs 1: ${many.run.okPerSec} vs ${max.run.okPerSec} accepted/s; Temporal starts/s: ${temporalStartRate}`);

  const resultsDir = path.join(REPO_ROOT, 'bench/results');
  await fs.mkdir(resultsDir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const file = path.join(resultsDir, `${stamp}.json`);
  await fs.writeFile(file, `${JSON.stringify({
    at: new Date().toISOString(),
    machine: { cores, cpu: os.cpus()[0]?.model, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, loadAverageAtEnd: os.loadavg() },
    commit: gitDescribe(),
    serviceRoot: SERVICE_ROOT,
    settings: { runS: RUN_S, warmupS: WARMUP_S, connections: CONNECTIONS, smtpMaxConnections: SMTP_MAX_CONNECTIONS, smtpInFlight: SMTP_IN_FLIGHT, temporalConcurrency: TEMPORAL_CONCURRENCY, accounts: accounts.length },
    rows,
    targets,
    wallSeconds: Math.round(elapsed() / 1000),
  }, null, 2)}\n`);
  out.push('', `JSON: ${path.relative(REPO_ROOT, file)}`);
  process.stdout.write(`${out.join('\n')}\n`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function gitDescribe(): { head: string; dirty: string[] } | undefined {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT }).toString().trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'workflows'], { cwd: REPO_ROOT }).toString().split('\n').filter(Boolean);
    return { head, dirty };
  } catch {
    return undefined;
  }
}

let failed = false;
try {
  await main();
} catch (err) {
  failed = true;
  if (interrupted) process.stderr.write(`bench interrupted (${interrupted})\n`);
  else process.stderr.write(`bench failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
} finally {
  log('cleaning up');
  await cleanupAll();
  log(`done in ${(elapsed() / 1000).toFixed(0)} s`);
}
process.exit(failed ? 1 : 0);
