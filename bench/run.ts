import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
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
import { batchLatency, scheduledLateness, workerMemory, type BatchLatencyResult, type JobsContext, type LatenessResult, type MemoryResult } from './lib/jobs.js';
import { fixedRate, maxRate, type HttpRun, type HttpTarget } from './lib/load.js';
import { MEMORY_PROBE } from './lib/memory.js';
import { selectedParts, type Part } from './lib/parts.js';
import { EMAIL_BODY, SENDER_DOMAIN } from './lib/payload.js';
import { cpuPerCount, cpuPerUnit, limitFromCpu, NOISY_OTHER, renderTable, renderTargets, type Row, type Target } from './lib/report.js';
import { prepareAccounts, SERVICE_ROOT, startService, startWorker, type ServiceHandle } from './lib/service.js';
import { measureStarts } from './lib/temporal-starts.js';
import { RETRY_GAPS_MS, RETRY_TOLERANCE_MS, webhookFigures, type WebhooksResult } from './lib/webhooks.js';

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
// Scheduled sends and batch jobs (bench/lib/jobs.ts); each can be changed for a run alone.
const envInt = (name: string, fallback: number) => {
  const n = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer`);
  return n;
};
const BATCH_RUNS = envInt('BENCH_BATCH_RUNS', 20);
const BATCH_SIZE = 100;
const SCHEDULED_COUNT = envInt('BENCH_SCHEDULED_COUNT', 1_000);
const MEMORY_PENDING = envInt('BENCH_MEMORY_PENDING', 10_000);
// The webhook figures' send load (bench/lib/webhooks.ts): a fixed rate, below what the service delivers
// without webhooks (its half-rate run: 130 to 175 a second on 2 cores).
const WEBHOOK_RATE = envInt('BENCH_WEBHOOK_RATE', 100);
// The whole bench ends by itself inside 6 minutes: phases shorten their drain waits to fit, the memory
// figure creates as many scheduled emails as the time left allows (saying how many), and a watchdog
// cleans up and exits at the hard limit whatever is going on.
const BUDGET_MS = 340_000;
const HARD_LIMIT_MS = 355_000;
// What the parts after the service's throughput runs need at least; the throughput drains leave it to them.
const MIN_MS: Partial<Record<Part, number>> = { batch: 30_000, scheduled: 40_000, webhooks: 25_000, memory: 50_000 };
// The memory figure's steps after creating its scheduled emails (settle, samples, stopping, output).
const MEMORY_TAIL_MS = 30_000;

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

  const parts = selectedParts();
  const sourceAtStart = sourceFingerprint();
  const logger = createLogger('warn', 'bench');
  const config = loadConfig(process.env);
  const cores = os.cpus().length;
  log(`mailer bench on ${cores} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}; parts: ${[...parts].join(', ') || 'none'}`);
  /** Time the parts still to come need at least, kept out of the throughput runs' drain waits. */
  const laterParts = [...parts].reduce((n, p) => n + (MIN_MS[p] ?? 0), 0);
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
  // The service's worker when it runs as two processes (MAILER_ROLE=api is then `server`).
  let worker: { pid: number } | undefined;
  const pgPid = await postmasterPid();
  const temporalPids = pidsMatching(path.join(tmp, 'temporal.db'));
  const groups: CpuGroup[] = [
    { name: 'server', pids: () => (server ? [server.pid] : []) },
    { name: 'srv-js', pids: () => (server ? [server.pid] : []), mainThread: true },
    { name: 'worker', pids: () => (worker ? [worker.pid] : []) },
    { name: 'wrk-js', pids: () => (worker ? [worker.pid] : []), mainThread: true },
    { name: 'postgres', pids: () => [pgPid], descendants: true },
    { name: 'temporal', pids: () => temporalPids },
    { name: 'sink', pids: () => [sink.pid] },
    { name: 'bench', pids: () => [process.pid] },
  ];
  const cpuColumns = groups.map((g) => g.name);
  const nodeThreads = ['srv-js', 'wrk-js', 'sink', 'bench'];
  const window = () => cpuWindow(groups);

  const rows: Row[] = [];
  const addRow = (row: Row) => {
    if (row.cpu && !row.limit) row.limit = limitFromCpu(row.cpu, nodeThreads);
    if (row.cpu) {
      row.notes = [...(row.notes ?? []), row.cpuUnits ? cpuPerCount(row.cpu, row.cpuUnits) : cpuPerUnit(row.cpu, row.value)].filter((n) => n !== '');
      if (row.cpu.other >= NOISY_OTHER) row.notes.push(`NOISY: other processes used ${row.cpu.other}% of a core during this figure; it understates this machine`);
    }
    rows.push(row);
    log(`${row.what}: ${row.value} ${row.unit}${row.p99 !== undefined && !Number.isNaN(row.p99) ? ` (p50 ${row.p50} ms, p99 ${row.p99} ms)` : ''}`);
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

  // ---- Baselines ------------------------------------------------------------------------------------------
  let insertRate: number | undefined;
  let nodemailerRate: number | undefined;
  let temporalStartRate: number | undefined;
  if (parts.has('baselines')) {
    // Baseline 1: a no-op Fastify route.
    {
      const child = await startChild<{ port: number }>('no-op server', 'noop-server.ts');
      server = child;
      await measureMax('noop', 'baseline: Fastify no-op route', httpTarget(child.ready.port));
      await child.stop();
      server = undefined;
    }

    // Baseline 2: a Fastify route doing one INSERT of the same row into the service's emails table.
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

    // Baseline 3: raw nodemailer pooled sends to the sink.
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

    // Baseline 4: Temporal dev server workflow starts.
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
  }

  // ---- The service (MAILER_ROLE=all): throughput, then batch latency and scheduled lateness -----------------
  const serviceEnv = (database: string, dataDir: string): Record<string, string> => ({
    DATABASE_URL: pg.url.replace(/\/bench_baseline$/, `/${database}`),
    TEMPORAL_ADDRESS: temporal.address,
    SMTP_URL: sink.ready.url,
    PORT: '0',
    GRPC_PORT: '0',
    MAILER_DATA_DIR: path.join(tmp, dataDir),
    MAILER_WORKFLOW_BUNDLE: bundles.service,
    MAILER_RATE_LIMIT: '1000000',
    MAILER_ADMIN_TOKEN: 'adm_bench-admin-token-0123456789abcdef',
    LOG_LEVEL: 'warn',
    // The webhook figures' receiver is on loopback; the inbound report listener on a free port, not 2526
    // (which a running `npm start` holds).
    MAILER_WEBHOOK_ALLOW_PRIVATE: '1',
    MAILER_INBOUND_PORT: '0',
  });
  const createDatabase = async (name: string) => {
    const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${name}`);
    await admin.end();
  };
  const jobsContext: JobsContext = {
    sink, log, window, remaining,
    // Read-only, from the all-in-one service's database: when each scheduled email fired.
    firedAt: async (prefix) => {
      const db = postgres(serviceEnv('bench_service', 'service').DATABASE_URL!, { max: 1, onnotice: () => {} });
      try {
        const rows = await db<{ subject: string; sent_at: Date | null }[]>`select subject, sent_at from scheduled_emails where subject like ${`${prefix}%`}`;
        return new Map(rows.filter((r) => r.sent_at).map((r) => [r.subject, r.sent_at!.getTime()]));
      } catch {
        return undefined;
      } finally {
        await db.end();
      }
    },
    addRow: (row) => {
      const problems = [service, apiProcess, workerProcess].map((p) => p?.problems()).filter((p) => p && p.count > 0);
      if (problems.length > 0) row.notes = [...(row.notes ?? []), `service logged ${problems.reduce((n, p) => n + p!.count, 0)} warnings/errors so far; last: ${problems.at(-1)!.last.at(-1)}`];
      addRow(row);
    },
  };
  let service: ServiceHandle | undefined;
  let apiProcess: ServiceHandle | undefined;
  let workerProcess: { pid: number; problems(): { count: number; last: string[] } } | undefined;

  let max: { run: HttpRun; deliveredPerSec: number } | undefined;
  let half: { run: HttpRun; deliveredPerSec: number } | undefined;
  let halfRate = 0;
  let many: { run: HttpRun; deliveredPerSec: number } | undefined;
  let accountCount = 1;
  let batch: BatchLatencyResult | undefined;
  let lateness: LatenessResult | undefined;
  let webhooks: WebhooksResult | undefined;
  if (parts.has('throughput') || parts.has('batch') || parts.has('scheduled') || parts.has('webhooks')) {
    await createDatabase('bench_service');
    const svc = await startService(serviceEnv('bench_service', 'service'));
    service = svc;
    server = svc;
    const accounts = await prepareAccounts(svc, SENDER_DOMAIN, parts.has('throughput') ? MANY_ACCOUNTS - 1 : 0);
    accountCount = accounts.length;
    log(`service started (pid ${svc.pid}, ${svc.baseUrl}${SERVICE_ROOT !== REPO_ROOT ? `, from ${SERVICE_ROOT}` : ''}); ${accounts.length} accounts with unlimited quota`);

    if (parts.has('throughput')) {
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
      const port = Number(new URL(svc.baseUrl).port);
      const oneAccount = httpTarget(port, { authorization: `Bearer ${svc.apiKey}` });
      /** Time left for this part: what the parts after it need at least is not ours. */
      const left = () => remaining() - laterParts;

      /** A measured service run and the delivery of what it accepted. */
      const serviceRun = async (key: string, what: string, load: () => Promise<HttpRun>, drainCapMs: number): Promise<{ run: HttpRun; deliveredPerSec: number }> => {
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
        const problems = svc.problems();
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
      };

      // Warm-up: JIT, the pool's connections, the worker's workflow cache, the SMTP pool; then let it deliver.
      {
        const before = (await sinkCount()).total;
        const warm = await maxRate('service warm-up', oneAccount, CONNECTIONS, 3);
        const d = await drain(before, warm.ok, Math.min(45_000, left() - 100_000));
        log(`service warm-up: ${warm.ok} accepted, ${d.delivered} delivered in ${d.drainS.toFixed(1)} s`);
      }

      max = await serviceRun('service', 'service: POST /v1/mail/emails, 1 account, max rate', () => maxRate('service', oneAccount, CONNECTIONS, RUN_S), Math.min(90_000, left() - 70_000));
      halfRate = Math.max(1, Math.round(max.run.okPerSec / 2));
      half = await serviceRun('service-half', `service: 1 account, fixed ${halfRate}/s (half max)`, () => fixedRate('service-half', oneAccount, halfRate, RUN_S), Math.min(45_000, left() - 45_000));

      if (left() > 35_000) {
        const target: HttpTarget = { ...oneAccount, headersPerConnection: accounts.map((a) => ({ authorization: `Bearer ${a.apiKey}` })) };
        many = await serviceRun('service-10acc', `service: ${accounts.length} accounts, max rate`, () => maxRate('service-10acc', target, CONNECTIONS, RUN_S), Math.min(60_000, left() - 15_000));
      } else {
        log('skipping the many-accounts run: not enough time left in the budget');
      }
    }

    // Batch latency, scheduled lateness and webhooks on the same service, once the throughput runs' mail is out.
    if (parts.has('batch') || parts.has('scheduled') || parts.has('webhooks')) {
      let last = (await sinkCount()).total;
      for (let quietFor = 0, waited = 0; quietFor < 1_000 && waited < 15_000; waited += 250) {
        await sleep(250);
        const now = (await sinkCount()).total;
        quietFor = now === last ? quietFor + 250 : 0;
        last = now;
      }
    }
    if (parts.has('batch')) {
      log(`batch latency: ${BATCH_RUNS} batches of ${BATCH_SIZE}, one at a time`);
      batch = await batchLatency(jobsContext, svc, BATCH_RUNS, BATCH_SIZE);
    }
    if (parts.has('scheduled')) {
      log(`scheduled lateness: ${SCHEDULED_COUNT} emails due the same second`);
      lateness = await scheduledLateness(jobsContext, svc, SCHEDULED_COUNT);
    }
    if (parts.has('webhooks')) {
      if (remaining() < MIN_MS.webhooks!) {
        log(`skipping the webhook figures: ${(remaining() / 1000).toFixed(0)} s left in the budget`);
      } else {
        // The wait for the last webhooks and discards: up to 30 s, but not into what the memory figure needs.
        const waitCapMs = Math.min(30_000, remaining() - 20_000 - (parts.has('memory') ? MIN_MS.memory! : 0));
        webhooks = await webhookFigures({ ...jobsContext, databaseUrl: serviceEnv('bench_service', 'service').DATABASE_URL! }, svc, WEBHOOK_RATE, RUN_S, waitCapMs);
      }
    }
    await svc.stop();
    server = undefined;
    service = undefined;
  }

  // ---- The service as two processes (MAILER_ROLE=api, MAILER_ROLE=worker): the worker's memory -------------
  let memory: MemoryResult | undefined;
  if (parts.has('memory')) {
    if (remaining() < MIN_MS.memory!) {
      log(`skipping the worker memory figure: ${(remaining() / 1000).toFixed(0)} s left in the budget`);
    } else {
      await createDatabase('bench_memory');
      // Its own task queue: nothing of the earlier runs' reaches this worker.
      const env = { ...serviceEnv('bench_memory', 'service-api'), TEMPORAL_TASK_QUEUE: 'mail-memory' };
      const memoryFiles = { api: path.join(tmp, 'api-memory.json'), worker: path.join(tmp, 'worker-memory.json') };
      const probe = { nodeArgs: ['--expose-gc'], preload: [MEMORY_PROBE] };
      const api = await startService({ ...env, MAILER_ROLE: 'api', BENCH_MEMORY_FILE: memoryFiles.api }, { name: 'service API', ...probe });
      apiProcess = api;
      server = api;
      await prepareAccounts(api, SENDER_DOMAIN, 0);
      const wrk = await startWorker({ ...env, MAILER_DATA_DIR: path.join(tmp, 'service-worker'), BENCH_MEMORY_FILE: memoryFiles.worker }, probe);
      workerProcess = wrk;
      worker = wrk;
      log(`service split: API pid ${api.pid} (${api.baseUrl}), worker pid ${wrk.pid}; worker memory with ${MEMORY_PENDING} scheduled emails pending`);
      memory = await workerMemory(jobsContext, api, wrk, MEMORY_PENDING, memoryFiles, () => performance.now() + remaining() - MEMORY_TAIL_MS);
      await Promise.all([api.stop(), wrk.stop()]);
      server = undefined;
      worker = undefined;
    }
  }

  // ---- Targets -------------------------------------------------------------------------------------------
  const targets: Target[] = [];
  if (max && half && insertRate !== undefined && nodemailerRate !== undefined) {
    const slowerBaseline = Math.min(insertRate, nodemailerRate);
    targets.push(
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
    );
  } else if (half) {
    targets.push({
      name: 'p99 accept latency at half max rate (ms)', value: half.run.latencyMs.p99, target: '<= 25 ms', met: half.run.latencyMs.p99 <= 25,
      formula: `p99 of ${half.run.ok} sends at ${halfRate}/s (achieved ${half.run.okPerSec}/s); the ratio targets need the baselines`,
    });
  }
  if (batch) {
    const all = batch.complete === batch.runs;
    const incomplete = all ? '' : `; ${batch.runs - batch.complete} runs incomplete: NOT MET whatever the percentile`;
    targets.push(
      {
        name: `batch of ${BATCH_SIZE}: p50 POST -> last message at sink (ms)`, value: batch.lastMs.p50, target: '<= 1000 ms',
        met: all && batch.lastMs.p50 <= 1000, formula: `p50 of ${batch.runs} sequential runs${incomplete}`,
      },
      {
        name: `batch of ${BATCH_SIZE}: p99 POST -> last message at sink (ms)`, value: batch.lastMs.p99, target: '<= 2000 ms',
        met: all && batch.lastMs.p99 <= 2000, formula: `p99 of ${batch.runs} runs (= the slowest; max ${batch.lastMs.max} ms)${incomplete}`,
      },
    );
  }
  if (lateness) {
    const l = lateness;
    targets.push(
      {
        name: `scheduled: arrived before scheduled_at`, value: l.early, shown: String(l.early), target: '0', met: l.arrived > 0 && l.early === 0,
        formula: `of ${l.arrived} arrived (${l.created} scheduled for the same second)${l.arrived === 0 ? ': nothing arrived, nothing to judge' : ''}`,
      },
      {
        name: 'scheduled: p99 lateness at sink (ms)', value: l.lateMs.p99, shown: l.arrived > 0 ? undefined : 'none arrived', target: '<= 1000 ms',
        met: l.arrived > 0 && l.arrived === l.created && l.lateMs.p99 <= 1000,
        formula: `p50 ${l.lateMs.p50} ms, p99 ${l.lateMs.p99} ms, max ${l.lateMs.max} ms over ${l.arrived} of ${l.created}` + (l.arrived < l.created ? ' (some never arrived: NOT MET)' : ''),
      },
      {
        name: 'scheduled: arrived exactly once', value: l.exactlyOnce, shown: `${l.exactlyOnce} of ${l.asked}`, target: `all ${l.asked}`,
        met: l.created === l.asked && l.exactlyOnce === l.asked,
        formula: `${l.created} created, ${l.arrived} arrived, ${l.duplicates} more than once, ${l.asked - l.created} not created`,
      },
    );
  }
  if (webhooks) {
    const h = webhooks;
    const none = h.requests === 0;
    targets.push(
      {
        name: 'webhooks: p50 event -> receiver (ms)', value: h.latencyMs.p50, shown: none ? 'none arrived' : undefined, target: '<= 150 ms',
        met: !none && h.latencyMs.p50 <= 150, formula: `over ${h.requests} delivery webhooks while sending ${h.rate}/s for ${h.durationS} s`,
      },
      {
        name: 'webhooks: p99 event -> receiver (ms)', value: h.latencyMs.p99, shown: none ? 'none arrived' : undefined, target: '<= 750 ms',
        met: !none && h.latencyMs.p99 <= 750, formula: `p50 ${h.latencyMs.p50} ms, p99 ${h.latencyMs.p99} ms, max ${h.latencyMs.max} ms over ${h.requests}`,
      },
      {
        name: 'webhooks: delivered emails with an acknowledged delivery webhook', value: h.exactlyOnce + h.duplicates,
        shown: `${h.exactlyOnce + h.duplicates} of ${h.delivered}`, target: `all ${h.accepted} accepted (duplicates allowed, counted)`,
        met: h.delivered > 0 && h.delivered === h.accepted && h.missing === 0,
        formula: `${h.exactlyOnce} exactly once, ${h.duplicates} more than once, ${h.missing} none; ${h.delivered} of ${h.accepted} accepted at the sink` +
          (h.badSignatures > 0 ? `; ${h.badSignatures} bad signatures` : ''),
      },
      ...h.retry.gaps.map((g, k) => ({
        name: `webhooks: retry gap ${k + 1} at the receiver, max (ms)`, value: g.max, shown: g.count > 0 ? undefined : 'none',
        target: `${RETRY_GAPS_MS[k]}..${RETRY_GAPS_MS[k]! + RETRY_TOLERANCE_MS} ms`,
        met: g.count > 0 && g.count === h.retry.deliveries && g.within === g.count,
        formula: `min ${g.min}, p50 ${g.p50}, max ${g.max} ms over ${g.count} of ${h.retry.deliveries} deliveries; ${g.within} within`,
      })),
      {
        name: 'webhooks: always-500 deliveries with exactly 4 attempts, then discarded', value: h.retry.fourThenDiscarded,
        shown: `${h.retry.fourThenDiscarded} of ${h.retry.emails}`, target: `all ${h.retry.emails}`,
        met: h.retry.emails > 0 && h.retry.deliveries === h.retry.emails && h.retry.fourThenDiscarded === h.retry.emails,
        formula: `attempts at the receiver per delivery: ${h.retry.detail.map((d) => d.arrivals.length).join(', ') || 'none'}; ` +
          `management API: ${h.retry.detail.map((d) => `${d.apiStatus ?? '?'} after ${d.apiAttempts.length}`).join(', ') || 'nothing'}`,
      },
    );
  }
  if (memory) {
    const m = memory;
    targets.push({
      name: `worker RSS above idle with ${m.pending} scheduled pending (MB)`, value: m.deltaMB, target: '<= 30 MB', met: m.deltaMB <= 30,
      formula: `${((m.loadedRssKiB * 1024) / 1e6).toFixed(1)} - ${((m.idleRssKiB * 1024) / 1e6).toFixed(1)} MB VmRSS` +
        (m.pending < m.asked ? `; ONLY ${m.pending} of the ${m.asked} asked for (created at ${m.creationPerSec}/s in ${m.creationS} s, the time budget): not extrapolated` : ''),
    });
  }

  // ---- Output ---------------------------------------------------------------------------------------------
  const out: string[] = [];
  const sourceChanged = sourceAtStart !== sourceFingerprint();
  if (sourceChanged) {
    out.push('', `WARNING: the service's code (src/, workflows/ of ${SERVICE_ROOT}) changed during this run: the figures may mix two versions ` +
      '(the workflow bundle is built at the start, the service loaded later). Measure a fixed copy with BENCH_SERVICE_ROOT (see bench/README.md).');
  }
  out.push('', `Results (${RUN_S} s per HTTP figure after a ${WARMUP_S} s warm-up; HTTP: autocannon, ${CONNECTIONS} connections; CPU in % of one core, ${cores * 100}% = all cores)`, '');
  out.push(renderTable(rows, cpuColumns), '');
  out.push('What bounds each figure:');
  for (const r of rows) {
    out.push(`  ${r.what}`);
    if (r.limit) out.push(`      limit: ${r.limit}`);
    for (const n of r.notes ?? []) out.push(`      ${n}`);
  }
  out.push('', 'Targets:', targets.length > 0 ? renderTargets(targets) : '  (none: the parts they need did not run)');
  if (many && max) out.push(`  (info) ${accountCount} accounts vs 1: ${many.run.okPerSec} vs ${max.run.okPerSec} accepted/s; Temporal starts/s: ${temporalStartRate ?? 'not measured'}`);
  const creation = [lateness && `${lateness.creationPerSec}/s (all-in-one service)`, memory && `${memory.creationPerSec}/s (API and worker apart)`].filter(Boolean);
  if (creation.length > 0) out.push(`  (info) scheduled emails created: ${creation.join(', ')}; Temporal starts alone: ${temporalStartRate !== undefined ? `${temporalStartRate}/s at ${TEMPORAL_CONCURRENCY} in flight` : 'not measured'}`);

  const resultsDir = path.join(REPO_ROOT, 'bench/results');
  await fs.mkdir(resultsDir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const file = path.join(resultsDir, `${stamp}.json`);
  await fs.writeFile(file, `${JSON.stringify({
    at: new Date().toISOString(),
    machine: { cores, cpu: os.cpus()[0]?.model, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, loadAverageAtEnd: os.loadavg() },
    commit: gitDescribe(),
    sourceChangedDuringRun: sourceChanged,
    serviceRoot: SERVICE_ROOT,
    parts: [...parts],
    settings: {
      runS: RUN_S, warmupS: WARMUP_S, connections: CONNECTIONS, smtpMaxConnections: SMTP_MAX_CONNECTIONS, smtpInFlight: SMTP_IN_FLIGHT,
      temporalConcurrency: TEMPORAL_CONCURRENCY, accounts: accountCount, batchRuns: BATCH_RUNS, batchSize: BATCH_SIZE,
      scheduledCount: SCHEDULED_COUNT, memoryPending: MEMORY_PENDING, webhookRate: WEBHOOK_RATE,
    },
    rows,
    targets,
    jobs: { batch, scheduled: lateness, webhooks, memory },
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

/**
 * What the measured service's code is: its HEAD and the mtimes of its changed and new files under src/
 * and workflows/. The workflow bundle is built at the start and the service loaded minutes later: a
 * change in between measures a mix of two versions, which the run then says.
 */
function sourceFingerprint(): string | undefined {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: SERVICE_ROOT, stdio: ['ignore', 'pipe', 'ignore'] }).toString();
    const changed = git('ls-files', '-m', '-o', '--exclude-standard', '--', 'src', 'workflows').split('\n').filter(Boolean);
    const mtimes = changed.map((f) => {
      try {
        return `${f}@${statSync(path.join(SERVICE_ROOT, f)).mtimeMs}`;
      } catch {
        return `${f}@gone`;
      }
    });
    return [git('rev-parse', 'HEAD').trim(), ...mtimes].join('\n');
  } catch {
    return undefined;
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
