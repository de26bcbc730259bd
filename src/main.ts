import { createDispatchers } from './app/create-dispatchers.js';
import { createQueueNotifier } from './app/queue-notifier.js';
import { startApiRole, type ApiRole } from './app/start-api-role.js';
import { startCore } from './app/start-core.js';
import { startWorkerRole } from './app/start-worker-role.js';
import { createStopList } from './app/stop-list.js';
import type { Config } from './config.js';
import type { Sql } from './db/sql.js';
import type { Logger } from './logger.js';
import type { Catcher } from './local/catcher.js';
import type { FirstRun } from './services/bootstrap-service.js';

/**
 * The composition root: `startMailer` runs the roles the config asks for over a shared core (src/app/),
 * with embedded PostgreSQL, Temporal and mail catcher for whatever is not configured
 * (app/provision-local.ts), and answers a handle whose `stop` undoes everything in reverse.
 */
export interface Mailer {
  config: Config;
  restUrl: string | undefined;
  grpcAddress: string | undefined;
  temporalAddress: string;
  temporalUiUrl: string | undefined;
  catcher: Catcher | undefined;
  /** The inbound SMTP listener for complaint and bounce reports (API role). */
  inboundUrl: string | undefined;
  /** The SMTP submission listener (API role; undefined when turned off). */
  submissionUrl: string | undefined;
  /** A worker process's probes and metrics (MAILER_ROLE=worker only). */
  workerProbeUrl: string | undefined;
  databaseUrl: string;
  adminToken: string;
  /** Set on the run that created the default account. */
  firstRun: FirstRun | undefined;
  adminTokenCreated: boolean;
  sql: Sql;
  stop(): Promise<void>;
}

export interface StartOptions {
  logger: Logger;
  /** The process environment, for finding tools (PATH); config is read by config.ts only. */
  env: NodeJS.ProcessEnv;
}

export async function startMailer(config: Config, { logger, env }: StartOptions): Promise<Mailer> {
  const stops = createStopList(logger);
  try {
    const core = await startCore(config, logger, env, stops);
    // The worker's email dispatcher exists before anything can queue, so queueing pokes it directly.
    const dispatchers = config.role !== 'api' ? createDispatchers(core) : undefined;
    // Wakes dispatchers (this process's at once, others by NOTIFY) when emails enter the delivery queue.
    const notifyQueued = createQueueNotifier(core.sql, dispatchers?.emails, logger);
    const worker = dispatchers ? await startWorkerRole(core, { dispatchers, notifyQueued }, stops) : undefined;
    const api: Partial<ApiRole> = config.role !== 'worker' ? await startApiRole(core, notifyQueued, stops) : {};
    return {
      config,
      restUrl: api.restUrl,
      grpcAddress: api.grpcAddress,
      inboundUrl: api.inboundUrl,
      submissionUrl: api.submissionUrl,
      catcher: worker?.catcher,
      workerProbeUrl: worker?.probeUrl,
      temporalAddress: core.temporalAddress,
      temporalUiUrl: core.temporalUiUrl,
      databaseUrl: core.databaseUrl,
      adminToken: core.admin.token,
      adminTokenCreated: core.admin.created,
      firstRun: core.firstRun,
      sql: core.sql,
      stop: stops.stop,
    };
  } catch (err) {
    await stops.stop();
    throw err;
  }
}
