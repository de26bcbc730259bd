import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, describe, expect, inject, it, onTestFailed } from 'vitest';
import { loadConfig } from '../../src/config.js';
import {
  PASSWORD_FILE,
  startEmbeddedPostgres,
  type EmbeddedPostgresHandle,
} from '../../src/local/embedded-postgres.js';
import { createLogger } from '../../src/logger.js';
import { startMailer, type Mailer } from '../../src/main.js';
import { startDevServer, type DevServer } from '../../src/local/temporal-dev-server.js';
import { bearer, loadClients, rpc } from '../helpers/grpc-client.js';
import { call, eventually, type JsonResponse } from '../helpers/http.js';
import { freePort } from '../helpers/ports.js';
import { childLogs, killAll, spawnService } from '../helpers/service-process.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { ADMIN_TOKEN, stackEnv } from '../helpers/stack.js';

/**
 * Faults answered honestly, by breaking things for real: a PostgreSQL of this file's own is stopped and
 * started again under a running API (the shared one serves the other files), and a Temporal dev server of
 * its own is started late. While a dependency is down the API answers 503 with Retry-After, never 500;
 * processes started while it is down wait for it instead of exiting; a scheduled email whose workflow start
 * failed during a Temporal outage starts as soon as Temporal answers again.
 */

const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'warn', 'faults');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const OWN_PASSWORD = crypto.randomBytes(24).toString('base64url');
let pg: EmbeddedPostgresHandle | undefined;
let pgOptions: Parameters<typeof startEmbeddedPostgres>[0] | undefined;
let dev: DevServer | undefined;
const mailers = new Set<Mailer>();
const sinks = new Set<SmtpSink>();

/**
 * This file's own PostgreSQL, on a port and data dir fixed on first use, so that a restart comes back where
 * it was (the first start initialises the directory).
 */
async function ownPostgresOptions(): Promise<Parameters<typeof startEmbeddedPostgres>[0]> {
  if (!pgOptions) {
    const dataDir = path.join(inject('tmpRoot'), `faults-pg-${crypto.randomBytes(4).toString('hex')}`);
    await fs.mkdir(dataDir, { recursive: true });
    // The password is chosen here (the server reads it from its data dir) so that processes started while
    // this PostgreSQL is down already have the URL it will answer on.
    await fs.writeFile(path.join(dataDir, PASSWORD_FILE), OWN_PASSWORD, { mode: 0o600 });
    pgOptions = { dataDir, port: await freePort(), database: 'mailer', logger };
  }
  return pgOptions;
}

async function startOwnPostgres(): Promise<EmbeddedPostgresHandle> {
  pg = await startEmbeddedPostgres(await ownPostgresOptions());
  return pg;
}

async function stopOwnPostgres(): Promise<void> {
  await pg?.stop();
  pg = undefined;
}

/** Every deployment of this file shares one database, so one encryption key (its DKIM keys are sealed under it). */
const SHARED_ENCRYPTION_KEY = crypto.randomBytes(32).toString('hex');

async function newDeployment(temporalAddress: string) {
  const { port } = await ownPostgresOptions();
  const sink = await startSmtpSink();
  sinks.add(sink);
  const taskQueue = `faults-${crypto.randomBytes(4).toString('hex')}`;
  const dataDir = path.join(inject('tmpRoot'), taskQueue);
  await fs.mkdir(dataDir, { recursive: true });
  const env = (extra: Record<string, string>) =>
    stackEnv(`postgres://postgres:${OWN_PASSWORD}@127.0.0.1:${port}/mailer`, sink.url, taskQueue, dataDir, {
      TEMPORAL_ADDRESS: temporalAddress,
      MAILER_RATE_LIMIT: '100000',
      MAILER_ENCRYPTION_KEY: SHARED_ENCRYPTION_KEY,
      ...extra,
    });
  return { sink, env };
}

async function startApi(env: NodeJS.ProcessEnv): Promise<Mailer> {
  const config = loadConfig(env);
  // Quieter than the stack's `warn`: every 503 of the outage logs one.
  const mailer = await startMailer(config, {
    logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'error', 'faults-api'),
    env: process.env,
  });
  mailers.add(mailer);
  return mailer;
}

async function apiKeyFor(restUrl: string): Promise<string> {
  const accounts = await call<{ accounts: { id: string; name: string }[] }>(
    'GET',
    `${restUrl}/v1/mail/admin/accounts`,
    { token: ADMIN_TOKEN },
  );
  expect(accounts.status, accounts.text).toBe(200);
  const account = accounts.body.accounts.find((a) => a.name === 'default')!;
  const key = await call('POST', `${restUrl}/v1/mail/admin/accounts/${account.id}/api-keys`, {
    token: ADMIN_TOKEN,
    body: { name: 'faults', permission: 'all' },
  });
  expect(key.status, key.text).toBe(200);
  return key.body.key as string;
}

const draft = (subject: string) => ({
  from: 'sender@example.com',
  to: ['someone@example.net'],
  subject,
  text: subject,
});

/** A /readyz answer names the components that are down and nothing else: no address, no driver text. */
function expectNotReady(res: JsonResponse, down: string[]): void {
  expect(res.status, res.text).toBe(503);
  expect(res.body.error).toBe('service unavailable');
  expect(res.body.down).toEqual(down);
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(res.text).not.toMatch(/127\.0\.0\.1|localhost|ECONN|postgres:|connect|\d{4,5}/i);
}

/** An answer to one of the calls hammer() keeps making: when it came, and how long it took. */
interface Answer {
  what: string;
  status: number;
  retryAfter: string | null;
  body: Record<string, unknown>;
  at: number;
  ms: number;
}

/** Keeps making each call (`what`, `fn`, then a pause of `gapMs`) until stop(), recording every answer. */
function hammer(calls: [what: string, fn: () => Promise<JsonResponse>, gapMs: number][]) {
  const answers: Answer[] = [];
  let hammering = true;
  const loops = calls.map(async ([what, fn, gapMs]) => {
    while (hammering) {
      const sent = Date.now();
      const res = await fn();
      answers.push({
        what,
        status: res.status,
        retryAfter: res.headers.get('retry-after'),
        body: res.body,
        at: Date.now(),
        ms: Date.now() - sent,
      });
      await sleep(gapMs);
    }
  });
  return {
    answers,
    stop: async () => {
      hammering = false;
      await Promise.all(loops);
    },
  };
}

/** Only the answers the fault allows: success (or the 404 asked for), or 503 with Retry-After. Never a 500. */
function expectOnlyAllowedAnswers(answers: Answer[]): void {
  for (const a of answers) {
    const expected = a.what === 'get' ? [404, 503] : [200, 503];
    expect(expected, `${a.what}: ${a.status} ${JSON.stringify(a.body)}`).toContain(a.status);
    if (a.status === 503) {
      expect(a.retryAfter, JSON.stringify(a.body)).toMatch(/^[1-9]\d*$/);
      expect(a.body).toEqual({ error: 'service unavailable', message: 'The database is unavailable; retry shortly' });
    }
  }
}

afterAll(async () => {
  await killAll();
  for (const m of mailers) await m.stop();
  for (const s of sinks) await s.close();
  await dev?.stop();
  await stopOwnPostgres();
});

describe('faults answered honestly', () => {
  it('PostgreSQL restarts under a running API: 503 with Retry-After while it is down (never 500), success after; /readyz names the database', async () => {
    await startOwnPostgres();
    const d = await newDeployment(inject('temporalAddress'));
    const api = await startApi(d.env({ MAILER_ROLE: 'api' }));
    const key = api.firstRun!.apiKey;
    const base = `${api.restUrl}/v1/mail`;
    const { email } = loadClients(api.grpcAddress!);
    expect((await call('GET', `${api.restUrl}/readyz`)).status).toBe(200);

    // Reads and writes keep coming while the database goes away and comes back.
    const { answers, stop } = hammer([
      ['list', () => call('GET', `${base}/emails?page_size=1`, { token: key }), 20],
      ['get', () => call('GET', `${base}/emails/em_00000000000000000000000000`, { token: key }), 20],
      ['send', () => call('POST', `${base}/emails`, { token: key, body: draft('during restart') }), 100],
    ]);
    await sleep(500);
    const stoppedAt = Date.now();
    await stopOwnPostgres();
    await sleep(1_500);

    const probeStarted = Date.now();
    const ready = await call('GET', `${api.restUrl}/readyz`);
    expect(Date.now() - probeStarted, 'a probe answers promptly while the database is down').toBeLessThan(4_000);
    expectNotReady(ready, ['database']);
    expect(ready.body.message).toBe('not ready: database unreachable');
    const down = await rpc(email, 'ListEmails', { page_size: 1 }, bearer(key));
    expect(down.ok).toBe(false);
    if (!down.ok) {
      expect(grpc.status[down.error.code]).toBe('UNAVAILABLE');
      expect(down.error.metadata.get('mail-error')).toEqual(['service unavailable']);
    }

    await startOwnPostgres();
    const restartedAt = Date.now();
    // Back: every kind of call succeeds again within a few seconds.
    await eventually(
      async () => {
        const recent = answers.filter((a) => a.at > restartedAt);
        return ['list', 'send'].every((w) => recent.some((a) => a.what === w && a.status === 200));
      },
      15_000,
      100,
    );
    const recoveredAt = Date.now();
    await sleep(500);
    await stop();

    const statuses = new Map<string, number>();
    for (const a of answers) statuses.set(`${a.what} ${a.status}`, (statuses.get(`${a.what} ${a.status}`) ?? 0) + 1);
    console.info(
      `PostgreSQL down ${restartedAt - stoppedAt} ms, calls succeed again ${recoveredAt - restartedAt} ms after it is back; ` +
        `slowest 503 ${Math.max(...answers.filter((a) => a.status === 503).map((a) => a.ms))} ms; answers: ` +
        JSON.stringify(Object.fromEntries(statuses)),
    );
    expectOnlyAllowedAnswers(answers);
    for (const what of ['list', 'get', 'send'])
      expect(
        answers.some((a) => a.what === what && a.status === 503),
        `${what} saw the outage`,
      ).toBe(true);
    // The 503s come promptly (no request waits out the driver's reconnect backoff), and so does recovery.
    const slowest = Math.max(...answers.filter((a) => a.status === 503).map((a) => a.ms));
    expect(slowest).toBeLessThan(3_000);
    expect(recoveredAt - restartedAt).toBeLessThan(5_000);
    expect((await call('GET', `${api.restUrl}/readyz`)).status).toBe(200);
    const after = await rpc(email, 'ListEmails', { page_size: 1 }, bearer(key));
    expect(after.ok).toBe(true);
    email.close();
    await api.stop();
    mailers.delete(api);
  }, 90_000);
});

describe('faults answered honestly', () => {
  it('a worker started while PostgreSQL and Temporal are down waits and then delivers; a scheduled email whose start failed during the outage starts as soon as Temporal is back', async () => {
    onTestFailed(() => console.error(childLogs()));
    // Down, but with its database created (an absent database is a configuration error, not an outage).
    if (!pgOptions) await startOwnPostgres();
    await stopOwnPostgres();
    const temporalDir = path.join(inject('tmpRoot'), `faults-temporal-${crypto.randomBytes(4).toString('hex')}`);
    await fs.mkdir(temporalDir, { recursive: true });
    const temporalPort = await freePort();
    const d = await newDeployment(`127.0.0.1:${temporalPort}`);

    // The worker starts with neither dependency up: it must wait, saying so, and not exit.
    const worker = spawnService('worker', d.env({ MAILER_ROLE: 'worker' }));
    await eventually(
      async () => {
        if (!worker.alive) throw new Error(`worker exited:\n${worker.output.slice(-40).join('\n')}`);
        return worker.output.filter((l) => l.includes('database unreachable at start; retrying')).length >= 2;
      },
      20_000,
      100,
    );

    await startOwnPostgres();
    await eventually(
      async () => {
        if (!worker.alive) throw new Error(`worker exited:\n${worker.output.slice(-40).join('\n')}`);
        return worker.output.some((l) => l.includes('Temporal unreachable at start; retrying'));
      },
      20_000,
      100,
    );

    // The API comes up without Temporal: sends are accepted (they need only the database), /readyz says what is down.
    const api = await startApi(d.env({ MAILER_ROLE: 'api' }));
    const base = `${api.restUrl}/v1/mail`;
    const key = await apiKeyFor(api.restUrl!);
    expectNotReady(await call('GET', `${api.restUrl}/readyz`), ['temporal']);
    const sent = await call('POST', `${base}/emails`, { token: key, body: draft('sent while Temporal was down') });
    expect(sent.status, sent.text).toBe(200);
    // Its workflow start fails (Temporal is down) but the email is accepted; the start is retried.
    const dueAt = Date.now() + 2_000;
    const scheduled = await call('POST', `${base}/emails/schedule`, {
      token: key,
      body: { ...draft('scheduled while Temporal was down'), scheduled_at: new Date(dueAt).toISOString() },
    });
    expect(scheduled.status, scheduled.text).toBe(200);
    const scheduledId = scheduled.body.id as string;
    const workflowStarted = async () =>
      (
        await api.sql<
          { workflow_started: boolean }[]
        >`select workflow_started from scheduled_emails where id = ${scheduledId}`
      )[0]!.workflow_started;
    expect(await workflowStarted()).toBe(false);

    dev = await startDevServer({
      cli: inject('temporalCli'),
      dataDir: temporalDir,
      port: temporalPort,
      namespace: 'default',
      ui: false,
      logger,
    });
    const backAt = Date.now();

    // The failed start is retried within seconds (backoff of at most a few seconds by now), not at the next sweep.
    await eventually(workflowStarted, 15_000, 100);
    const startedAfter = Date.now() - backAt;
    expect(startedAfter).toBeLessThan(10_000);

    // The worker came up and delivers both, once each.
    const subjects = ['sent while Temporal was down', 'scheduled while Temporal was down'];
    await eventually(
      async () => subjects.every((s) => d.sink.messages.some((m) => m.parsed.subject === s)),
      40_000,
      100,
    );
    const deliveredAfter = Date.now() - backAt;
    await sleep(1_000);
    for (const s of subjects)
      expect(
        d.sink.messages.filter((m) => m.parsed.subject === s),
        s,
      ).toHaveLength(1);
    expect(worker.alive).toBe(true);
    await eventually(async () => (await call('GET', `${api.restUrl}/readyz`)).status === 200, 10_000, 200);
    console.info(
      `Temporal back: the failed scheduled start went through after ${startedAfter} ms, both emails delivered after ${deliveredAfter} ms`,
    );
  }, 150_000);
});
