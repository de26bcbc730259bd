import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { loadConfig } from '../../src/config.js';
import { startEmbeddedPostgres } from '../../src/local/embedded-postgres.js';
import { migrate } from '../../src/db/migrate.js';
import { createSql } from '../../src/db/sql.js';
import { createLogger } from '../../src/logger.js';
import { locateTemporalCli, startDevServer } from '../../src/local/temporal-dev-server.js';
import { buildWorkflowBundle } from '../../src/temporal/worker.js';
import { freePort } from './ports.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Admin URL of the embedded PostgreSQL (its `postgres` database). */
    pgAdminUrl: string;
    /** The migrated database each test file's database is copied from. */
    templateDatabase: string;
    temporalAddress: string;
    temporalCli: string;
    workflowBundle: string;
    tmpRoot: string;
  }
}

/** Starts the real PostgreSQL and Temporal the whole run shares, and prebuilds the workflow bundle once. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'warn', 'test-setup');
  const config = loadConfig(process.env);
  const tmpRoot = await fs.mkdtemp(path.join(os.tmpdir(), 'mailer-test-'));
  // The embedded server runs as the `postgres` user when we are root: it must be able to enter this dir.
  await fs.chmod(tmpRoot, 0o755);

  const pg = await startEmbeddedPostgres({
    dataDir: tmpRoot,
    port: await freePort(),
    database: 'mailer_template',
    logger,
  });
  const templateSql = createSql(pg.url, { max: 1 });
  await migrate(templateSql, logger);
  await templateSql.end();

  const cli = await locateTemporalCli({
    cliPath: config.temporalCliPath,
    cacheDir: config.cacheDir,
    env: process.env,
    logger,
  });
  if (!cli) throw new Error('no Temporal CLI: install Go (it is built once) or set TEMPORAL_CLI_PATH');
  const temporal = await startDevServer({
    cli,
    dataDir: tmpRoot,
    port: await freePort(),
    namespace: 'default',
    ui: false,
    logger,
  });

  const bundleFile = path.join(tmpRoot, 'workflow-bundle.js');
  await fs.writeFile(bundleFile, (await buildWorkflowBundle()).code);

  project.provide('pgAdminUrl', pg.url.replace(/\/mailer_template$/, '/postgres'));
  project.provide('templateDatabase', 'mailer_template');
  project.provide('temporalAddress', temporal.address);
  project.provide('temporalCli', cli);
  project.provide('workflowBundle', bundleFile);
  project.provide('tmpRoot', tmpRoot);

  return async () => {
    await temporal.stop();
    await pg.stop();
    await fs.rm(tmpRoot, { recursive: true, force: true });
  };
}
