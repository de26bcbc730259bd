import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import postgres from 'postgres';
import { inject } from 'vitest';
import { loadConfig, type Config } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startMailer, type Mailer } from '../../src/main.js';
import { startSmtpSink, type SmtpSink } from './smtp-sink.js';

export const ADMIN_TOKEN = 'adm_test-admin-token-0123456789abcdef';

/** A database of its own for a test file, copied from the migrated template (fast: no migrations). */
export async function createTestDatabase(): Promise<string> {
  const name = `t_${crypto.randomBytes(6).toString('hex')}`;
  const admin = postgres(inject('pgAdminUrl'), { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database ${name} template ${inject('templateDatabase')}`);
  } finally {
    await admin.end();
  }
  return inject('pgAdminUrl').replace(/\/postgres$/, `/${name}`);
}

/** The environment a service process of the test stack runs with (also for child processes). */
export function stackEnv(
  databaseUrl: string,
  smtpUrl: string,
  taskQueue: string,
  dataDir: string,
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_TASK_QUEUE: taskQueue,
    SMTP_URL: smtpUrl,
    MAILER_DATA_DIR: dataDir,
    MAILER_ADMIN_TOKEN: ADMIN_TOKEN,
    MAILER_WORKFLOW_BUNDLE: inject('workflowBundle'),
    PORT: '0',
    GRPC_PORT: '0',
    MAILER_INBOUND_PORT: '0',
    MAILER_WORKER_PORT: '0',
    // Off (0) unless a test gives it a free port: stacks running side by side would all want 2587.
    MAILER_SUBMISSION_PORT: '0',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    ...extra,
  };
}

export interface Stack {
  mailer: Mailer;
  sink: SmtpSink;
  /** http://127.0.0.1:PORT/v1/mail */
  api: string;
  admin: string;
  grpcAddress: string;
  databaseUrl: string;
  taskQueue: string;
  dataDir: string;
  /** The default account's key (permission all) and id, created on first start. */
  apiKey: string;
  accountId: string;
  stop(): Promise<void>;
}

const once = (fn: () => Promise<void>) => {
  let done: Promise<void> | undefined;
  return () => (done ??= fn());
};

/**
 * The whole service in this process over the shared PostgreSQL and Temporal, with its own database, task
 * queue and receiving SMTP server.
 */
export async function startStack(env: Record<string, string> = {}, overrides: Partial<Config> = {}): Promise<Stack> {
  const sink = await startSmtpSink();
  const databaseUrl = await createTestDatabase();
  const taskQueue = `test-${crypto.randomBytes(4).toString('hex')}`;
  const dataDir = path.join(inject('tmpRoot'), taskQueue);
  await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
  const config = loadConfig(stackEnv(databaseUrl, sink.url, taskQueue, dataDir, env), overrides);
  const logger = createLogger(config.logLevel, 'test');
  const mailer = await startMailer(config, { logger, env: process.env });
  if (!mailer.firstRun) throw new Error('expected a fresh database to be seeded');
  return {
    mailer,
    sink,
    api: `${mailer.restUrl}/v1/mail`,
    admin: `${mailer.restUrl}/v1/mail/admin`,
    grpcAddress: mailer.grpcAddress!,
    databaseUrl,
    taskQueue,
    dataDir,
    apiKey: mailer.firstRun.apiKey,
    accountId: mailer.firstRun.accountId,
    // Once, however often it is called: a test may stop the stack before its file's hooks do.
    stop: once(async () => {
      await mailer.stop();
      await sink.close();
    }),
  };
}
