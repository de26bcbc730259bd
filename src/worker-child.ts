import { loadConfig } from './config.js';
import { createLogger, resolveLogFormat } from './logger.js';
import { startMailer } from './main.js';
import type { WorkerReady } from './app/worker-process.js';

/**
 * The worker process that `npm start` forks with MAILER_ROLE=all (app/worker-process.ts): the worker role,
 * on the database and Temporal its parent started or was given. It stops on SIGTERM from the parent, and
 * also when the parent is gone (its IPC channel closes), so that it never outlives it. Ctrl-C in a terminal
 * reaches the whole process group: the parent decides, so SIGINT is ignored here.
 */
async function main(): Promise<void> {
  const config = loadConfig(process.env);
  // As the parent decided (it sets MAILER_LOG_FORMAT): this process's stdout may be a pipe to it.
  const logger = createLogger(
    config.logLevel,
    'mailer-worker',
    undefined,
    resolveLogFormat(config.logFormat, process.stdout.isTTY),
  );
  const mailer = await startMailer(config, { logger, env: process.env });
  let stopping = false;
  const stop = (why: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ why }, 'worker process stopping');
    // Past this, whatever is still running is as if killed: leases and Temporal retries take it over.
    setTimeout(() => process.exit(1), 30_000).unref();
    mailer.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => {});
  process.on('disconnect', () => stop('the parent process is gone'));
  const ready: WorkerReady = { type: 'ready', catcherUrl: mailer.catcher?.url, probeUrl: mailer.workerProbeUrl };
  process.send?.(ready);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
