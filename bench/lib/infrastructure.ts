import crypto from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import postgres from 'postgres';
import type { Config } from '../../src/config.js';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../../src/local/embedded-postgres.js';
import { STATEMENT_TIMES, STATEMENT_TIMES_SETTINGS } from './statement-times.js';
import type { Logger } from '../../src/logger.js';
import { locateTemporalCli, startDevServer, type DevServer } from '../../src/local/temporal-dev-server.js';
import { freePort } from '../../test/helpers/ports.js';
import { REPO_ROOT, startChild, type BenchChild } from './children.js';
import { onCleanup } from './lifecycle.js';
import { SERVICE_ROOT } from './service.js';

export interface SinkCount {
  total: number;
  duplicates: number;
  signed: number;
}

/** What every part shares: one temp dir, PostgreSQL, the Temporal dev server, workflow bundles, the SMTP sink. */
export interface Infrastructure {
  tmp: string;
  pg: EmbeddedPostgresHandle;
  /** The postmaster's pid (its backends are its descendants). */
  pgPid: number;
  temporal: DevServer;
  bundles: { service: string; noop: string };
  sink: BenchChild<{ url: string }>;
  /** Messages received on every address of the sink; `signed`: those with a DKIM-Signature header. */
  sinkCount(): Promise<SinkCount>;
  /** The environment of a service process on database `database` with its data dir `dataDir` under tmp. */
  serviceEnv(database: string, dataDir: string): Record<string, string>;
  createDatabase(name: string): Promise<void>;
}

export async function startInfrastructure(config: Config, logger: Logger): Promise<Infrastructure> {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mailer-bench-'));
  onCleanup('remove the temp dir', () => fs.rm(tmp, { recursive: true, force: true }));
  // Run as root, embedded PostgreSQL runs as the `postgres` user, who must be able to enter this dir.
  await fs.chmod(tmp, 0o755);

  const [pg, temporal, bundles, sink] = await Promise.all([
    startPostgres(tmp, logger),
    startTemporal(tmp, config, logger),
    buildBundles(tmp),
    startChild<{ url: string }>('smtp sink', 'sink.ts'),
  ]);
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
    // One installation key for every service process, whatever its data dir: the split memory figure's API and
    // worker have a data dir each, and a worker refuses DKIM keys sealed under another process's generated key.
    MAILER_ENCRYPTION_KEY: crypto.createHash('sha256').update('mailer bench').digest('hex'),
    LOG_LEVEL: 'warn',
    // The webhook figures' receiver is on loopback; the inbound report listener on a free port, not 2526
    // (which a running `npm start` holds).
    MAILER_WEBHOOK_ALLOW_PRIVATE: '1',
    MAILER_INBOUND_PORT: '0',
    MAILER_WORKER_PORT: '0',
    // SMTP submission is not measured; off, so no bench service wants 2587.
    MAILER_SUBMISSION_PORT: '0',
  });
  return {
    tmp,
    pg,
    pgPid: await postmasterPid(tmp),
    temporal,
    bundles,
    sink,
    serviceEnv,
    sinkCount: () => sink.request<SinkCount>('count'),
    createDatabase: async (name) => {
      const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
      await admin.unsafe(`create database ${name}`);
      await admin.end();
    },
  };
}

const postmasterPid = async (tmp: string) =>
  Number((await fs.readFile(path.join(tmp, 'postgres', 'postmaster.pid'), 'latin1')).split('\n')[0]);

async function startPostgres(tmp: string, logger: Logger): Promise<EmbeddedPostgresHandle> {
  const h = await startEmbeddedPostgres({
    dataDir: tmp,
    port: await freePort(),
    database: 'bench_baseline',
    logger,
    ...(STATEMENT_TIMES ? { settings: STATEMENT_TIMES_SETTINGS } : {}),
  });
  const pid = await postmasterPid(tmp);
  // embedded-postgres waits for an exit that never comes if the server is gone already (Ctrl-C
  // reaches it too, and it stops by itself).
  onCleanup('stop PostgreSQL', async () => {
    if (alive(pid)) await Promise.race([h.stop(), sleep(10_000)]);
  });
  return h;
}

async function startTemporal(tmp: string, config: Config, logger: Logger): Promise<DevServer> {
  const cli = await locateTemporalCli({
    cliPath: config.temporalCliPath,
    cacheDir: config.cacheDir,
    env: process.env,
    logger,
  });
  if (!cli) throw new Error('no Temporal CLI: install Go (it is built once) or set TEMPORAL_CLI_PATH');
  const dev = await startDevServer({
    cli,
    dataDir: tmp,
    port: await freePort(),
    namespace: 'default',
    ui: false,
    logger,
  });
  onCleanup('stop the Temporal dev server', dev.stop);
  return dev;
}

/** The prebuilt bundle production would load (src/temporal/worker.ts bundles the same entry point), and the no-op one. */
async function buildBundles(tmp: string): Promise<{ service: string; noop: string }> {
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
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
