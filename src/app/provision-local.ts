import { startEmbeddedPostgres } from '../local/embedded-postgres.js';
import type { CaughtMessagesRepo } from '../db/index.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { startCatcher, type Catcher } from '../local/catcher.js';
import { locateTemporalCli, startDevServer } from '../local/temporal-dev-server.js';
import type { StopList } from './stop-list.js';

/**
 * Development only: for each of PostgreSQL, Temporal and SMTP that the config leaves unset, an embedded
 * one with its data in the data dir. A production config sets all three and none of this runs.
 */

/** The configured PostgreSQL, else the embedded server. */
export async function provisionDatabase(config: Config, logger: Logger, stops: StopList): Promise<string> {
  if (config.databaseUrl) return config.databaseUrl;
  const pg = await startEmbeddedPostgres({ dataDir: config.dataDir, port: config.embeddedPostgresPort, logger });
  stops.onStop(pg.stop);
  return pg.url;
}

/** The configured Temporal cluster, else the dev server (with its UI). */
export async function provisionTemporal(
  config: Config,
  env: NodeJS.ProcessEnv,
  logger: Logger,
  stops: StopList,
): Promise<{ address: string; uiUrl: string | undefined }> {
  if (config.temporalAddress) return { address: config.temporalAddress, uiUrl: undefined };
  const cli = await locateTemporalCli({ cliPath: config.temporalCliPath, cacheDir: config.cacheDir, env, logger });
  if (!cli) {
    throw new Error(
      'No Temporal server: set TEMPORAL_ADDRESS, or install the Temporal CLI (https://docs.temporal.io/cli) on PATH or at TEMPORAL_CLI_PATH, ' +
        `or install Go so that it can be built once into ${config.cacheDir}.`,
    );
  }
  const dev = await startDevServer({
    cli,
    dataDir: config.dataDir,
    port: config.embeddedTemporalPort,
    namespace: config.temporalNamespace,
    ui: true,
    logger,
  });
  stops.onStop(dev.stop);
  return { address: dev.address, uiUrl: dev.uiUrl };
}

/** The configured SMTP relay, or (MAILER_DELIVERY=catcher) the mail catcher, whose simulated reports go where mailed-back ones do. */
export async function provisionSmtp(
  config: Config,
  deps: {
    caught: CaughtMessagesRepo;
    onSimulatedReport: (report: Buffer, rcptTo: string[]) => Promise<unknown>;
    logger: Logger;
  },
  stops: StopList,
): Promise<{ smtpUrl: string; catcher: Catcher | undefined }> {
  if (config.delivery !== 'catcher') return { smtpUrl: config.smtpUrl ?? '', catcher: undefined };
  const catcher = await startCatcher({
    host: '127.0.0.1',
    port: config.catcherPort,
    dataDir: config.dataDir,
    repo: deps.caught,
    logger: deps.logger,
    onSimulatedReport: deps.onSimulatedReport,
  });
  stops.onStop(catcher.close);
  return { smtpUrl: catcher.url, catcher };
}
