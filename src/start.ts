import { fileURLToPath } from 'node:url';
import { startWorkerProcess, type WorkerProcess } from './app/worker-process.js';
import { loadConfig, type Config, type LogFormat } from './config.js';
import { createLogger, resolveLogFormat, type Logger } from './logger.js';
import { startMailer, type Mailer } from './main.js';
import { forgetFirstRun, pendingFirstRun } from './services/bootstrap-service.js';

/** What the banner shows: the process's own mailer, or (split) the API's with the worker child's parts. */
type Shown = Omit<Mailer, 'catcher'> & {
  catcher: { url: string } | undefined;
  workerPid?: number;
  firstRunEarlier?: boolean;
};

/**
 * `npm start`: the whole service (or the role MAILER_ROLE names), until Ctrl-C, which stops everything it
 * started. With role all and MAILER_WORKER_PROCESS (the default) the worker role runs in a supervised child
 * process (app/worker-process.ts) and this one serves the API. The first run prints the API key and the
 * admin token, once; a key whose first run stopped before printing it is printed by the next start.
 */
export async function runServer(overrides: Partial<Config> = {}): Promise<void> {
  const config = loadConfig(process.env, overrides);
  // Decided here, where stdout is the terminal's or not, and handed to the worker child (its stdout may be a pipe).
  const logFormat = resolveLogFormat(config.logFormat, process.stdout.isTTY);
  const logger = createLogger(config.logLevel, 'mailer', undefined, logFormat);
  const split = config.role === 'all' && config.workerProcess;
  const mailer = await startMailer(split ? { ...config, role: 'api' } : config, { logger, env: process.env });
  // This run's first key, else one kept by a first run that stopped before its banner (bootstrap-service.ts).
  const earlier = mailer.firstRun ? undefined : await pendingFirstRun(config.dataDir, logger);
  let worker: WorkerProcess | undefined;
  if (split) {
    worker = await startWorker(mailer, logger, logFormat).catch(async (err: unknown) => {
      await mailer.stop();
      throw err;
    });
  }
  const shown: Shown = {
    ...(worker
      ? {
          ...mailer,
          config,
          catcher: worker.ready.catcherUrl ? { url: worker.ready.catcherUrl } : undefined,
          workerProbeUrl: worker.ready.probeUrl,
          workerPid: worker.pid(),
        }
      : mailer),
    ...(earlier ? { firstRun: earlier, firstRunEarlier: true } : {}),
  };
  process.stdout.write(banner(shown), (err) => {
    // Shown: the key is no longer kept in clear in the data dir. Not written (stdout gone): kept for the next start.
    if (!err && shown.firstRun)
      forgetFirstRun(config.dataDir).catch((e: unknown) =>
        logger.warn({ err: e }, 'could not delete the kept first API key from the data dir'),
      );
  });

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) {
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'stopping');
    // The worker first: it needs the database and Temporal this process may have started.
    (worker?.stop() ?? Promise.resolve())
      .then(() => mailer.stop())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

/**
 * The worker child on this process's database and Temporal (embedded ones included) and data dir; its
 * probes on MAILER_WORKER_PORT when set, else on a free port (two services on one machine must not clash).
 */
function startWorker(mailer: Mailer, logger: Logger, logFormat: LogFormat): Promise<WorkerProcess> {
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return startWorkerProcess({
    entry: fileURLToPath(new URL(`./worker-child.${ext}`, import.meta.url)),
    env: {
      ...process.env,
      MAILER_ROLE: 'worker',
      DATABASE_URL: mailer.databaseUrl,
      TEMPORAL_ADDRESS: mailer.temporalAddress,
      MAILER_DATA_DIR: mailer.config.dataDir,
      MAILER_WORKER_PORT: process.env.MAILER_WORKER_PORT || '0',
      MAILER_LOG_FORMAT: logFormat,
    },
    logger,
  });
}

function banner(m: Shown): string {
  const lines = [
    '',
    `mailer is running (role: ${m.config.role}${m.workerPid ? `, the worker in process ${m.workerPid}` : ''})`,
  ];
  if (m.restUrl) {
    lines.push(`  REST API      ${m.restUrl}/v1/mail   (OpenAPI: ${m.restUrl}/v1/mail/openapi.json)`);
    lines.push(`  gRPC          ${m.grpcAddress}   (gRPC, gRPC-Web and Connect)`);
    lines.push(
      `  Console       ${m.restUrl}/console   (sign in with the admin token, or an API key of permission all)`,
    );
  }
  if (m.submissionUrl) lines.push(`  SMTP submission  ${m.submissionUrl}   (STARTTLS, AUTH with an API key)`);
  if (m.workerProbeUrl) lines.push(`  Probes        ${m.workerProbeUrl}/healthz, /readyz and /metrics`);
  if (m.inboundUrl)
    lines.push(
      `  Inbound MX    ${m.inboundUrl}   (mail for inbound routes, bounce and complaint reports, unsubscribes)`,
    );
  lines.push(`  Temporal      ${m.temporalAddress}${m.temporalUiUrl ? `   (UI: ${m.temporalUiUrl})` : ''}`);
  if (m.config.role !== 'api') lines.push(`  Delivery      ${deliveryLine(m.config)}`);
  if (m.catcher) {
    lines.push(`  Mail catcher  ${m.catcher.url}: mail is kept in ${m.config.dataDir}/mail/*.eml`);
    if (m.restUrl)
      lines.push(
        `                and shown in the console; simulator: bounce@, complaint@, asyncbounce@simulator.mailer.test`,
      );
  }
  lines.push(`  Data          ${m.config.dataDir}`);
  if (m.firstRunEarlier)
    lines.push('', 'The first run stopped before showing its API key. It is shown once, now; keep it:');
  else if (m.firstRun || m.adminTokenCreated) lines.push('', 'First run. These secrets are shown once; keep them:');
  if (m.firstRun) {
    lines.push(`  Account       ${m.firstRun.accountId} (sender domain ${m.firstRun.domain}, verified)`);
    lines.push(`  API key       ${m.firstRun.apiKey}   (permission: all)`);
  }
  if (m.adminTokenCreated) lines.push(`  Admin token   ${m.adminToken}   (also in ${m.config.dataDir}/admin-token)`);
  if (m.firstRun && m.restUrl) {
    lines.push(
      '',
      'Send your first email:',
      `  curl -s ${m.restUrl}/v1/mail/emails \\`,
      `    -H "Authorization: Bearer ${m.firstRun.apiKey}" -H "Content-Type: application/json" \\`,
      `    -d '{"from":"hello@${m.firstRun.domain}","to":["you@example.net"],"subject":"Hello","text":"It works."}'`,
    );
  }
  lines.push('', 'Ctrl-C stops everything.', '');
  return lines.join('\n');
}

/** How mail leaves, as the banner says it (never the relay's credentials). */
function deliveryLine(config: Config): string {
  if (config.delivery === 'direct')
    return `direct to each recipient domain's MX hosts (port ${config.mxPort}), as ${config.hostname}; DKIM-signed`;
  if (config.delivery === 'relay') {
    const relay = new URL(config.smtpUrl ?? '');
    return `relay through ${relay.protocol}//${relay.host} as ${config.hostname}; DKIM-signed`;
  }
  return 'the built-in catcher (nothing leaves this machine); DKIM-signed';
}

// Run when executed directly (npm start), not when imported (the CLI's `server start`).
if (import.meta.url === `file://${process.argv[1]}`) {
  runServer().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
