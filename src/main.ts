import crypto from 'node:crypto';
import dns from 'node:dns/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { admitAdmin, createAdminApi } from './api/admin-api.js';
import type { CallContext } from './api/call-context.js';
import { createEmailApi } from './api/email-api.js';
import { createGuard } from './api/guard.js';
import type { Config } from './config.js';
import { consolePlugin } from './console/console-plugin.js';
import { isDatabaseUnavailable } from './db/db-unavailable.js';
import { startEmbeddedPostgres } from './db/embedded-postgres.js';
import { migrate } from './db/migrate.js';
import { IDEMPOTENCY_TTL_HOURS } from './domain/limits.js';
import { WEBHOOK_QUEUE_CHANNEL } from './db/repos/webhook-deliveries-repo.js';
import { createRepos } from './db/repos/index.js';
import { createSeedRepo } from './db/repos/seed-repo.js';
import { createSql, type Sql } from './db/sql.js';
import { buildRestApp } from './http/rest-app.js';
import { trackingRoutes } from './http/tracking-routes.js';
import type { Logger } from './logger.js';
import { startCatcher, type Catcher } from './mail/catcher.js';
import { startInboundServer } from './mail/inbound-server.js';
import { createReportTokens } from './mail/report-token.js';
import { createLinkTracker } from './mail/tracking.js';
import { createMailTransport, type MailTransport } from './mail/transport.js';
import { createMetrics } from './metrics.js';
import { retryAtStart } from './retry-at-start.js';
import { buildGrpcApp } from './rpc/grpc-app.js';
import { createAccountsService } from './services/accounts-service.js';
import { createAcceptance } from './services/acceptance.js';
import { createApiKeysService } from './services/api-keys-service.js';
import { createAuthService } from './services/auth-service.js';
import { createAuthThrottle } from './services/auth-throttle.js';
import { createBatchService } from './services/batch-service.js';
import { loadAdminToken, seedIfEmpty, type FirstRun } from './services/bootstrap-service.js';
import { createCaughtMailService } from './services/caught-mail-service.js';
import { createDomainsService } from './services/domains-service.js';
import { createHealthService } from './services/health-service.js';
import { createReadiness } from './services/readiness-service.js';
import { createEmailQueryService } from './services/email-query-service.js';
import { createFeedbackService } from './services/feedback-service.js';
import { createInboundFeedbackService } from './services/inbound-feedback-service.js';
import { createIdempotency } from './services/idempotency.js';
import { createOperatorService } from './services/operator-service.js';
import { createRateLimiter } from './services/rate-limiter.js';
import { createScheduleService } from './services/schedule-service.js';
import { createSendService } from './services/send-service.js';
import { createSenderCheck } from './services/sender-check.js';
import { createTrackingService } from './services/tracking-service.js';
import { createUsageRecorder } from './services/usage-recorder.js';
import { createWebhooksService } from './services/webhooks-service.js';
import { connectTemporal, type TemporalClient } from './temporal/client.js';
import { createDeliveryActivities } from './temporal/delivery-activities.js';
import { locateTemporalCli, startDevServer } from './temporal/dev-server.js';
import { createDispatcher, QUEUE_CHANNEL, type Dispatcher } from './temporal/dispatcher.js';
import { createJobActivities } from './temporal/job-activities.js';
import { createJobStarters } from './temporal/job-starters.js';
import { createJobSweeper } from './temporal/job-sweeper.js';
import { createPeriodicSweep } from './temporal/periodic-sweep.js';
import { createStartRetrier } from './temporal/start-retrier.js';
import { isTemporalUnavailable } from './temporal/temporal-unavailable.js';
import { createWebhookActivities } from './temporal/webhook-activities.js';
import { createTemporalWorker, type TemporalWorker } from './temporal/worker.js';
import { checkWebhookUrl } from './webhooks/address-guard.js';
import { postWebhook } from './webhooks/post.js';
import { sendTestRequest } from './webhooks/test-request.js';

/**
 * The composition root: the only place that builds and wires things. `startMailer` runs the roles the
 * config asks for, with embedded PostgreSQL, Temporal and mail catcher for whatever is not configured,
 * and answers a handle whose `stop` undoes everything in reverse.
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
  const cleanups: (() => Promise<void>)[] = [];
  const onStop = (fn: () => Promise<void>) => cleanups.unshift(fn);
  const stop = async () => {
    for (const fn of cleanups.splice(0)) {
      await fn().catch((err: unknown) => logger.warn({ err }, 'error while stopping'));
    }
  };
  const runsApi = config.role !== 'worker';
  const runsWorker = config.role !== 'api';

  try {
    // PostgreSQL: the configured one, else the embedded server in the data dir.
    let databaseUrl = config.databaseUrl;
    if (!databaseUrl) {
      const pg = await startEmbeddedPostgres({ dataDir: config.dataDir, port: config.embeddedPostgresPort, logger });
      onStop(pg.stop);
      databaseUrl = pg.url;
    }
    const sql = createSql(databaseUrl, { max: 40 });
    onStop(() => sql.end({ timeout: 5 }));
    let firstRun: FirstRun | undefined;
    // A database still down (or restarting) is waited for; see retry-at-start.ts.
    await retryAtStart({
      what: 'database', isTransient: isDatabaseUnavailable, logger,
      attempt: () => migrate(sql, logger, async (tx) => {
        firstRun = await seedIfEmpty(createSeedRepo(tx), config.defaultDomain);
      }),
    });
    const repos = createRepos(sql);
    const admin = await loadAdminToken(config.adminToken, config.dataDir);
    // The worker signs tracking links and the API checks them, maybe in other processes: one key, in the database.
    const trackingKey = await repos.settings.getOrCreate('tracking_key', crypto.randomBytes(32).toString('base64url'));
    const linkTracker = createLinkTracker({ baseUrl: config.publicUrl, key: trackingKey });
    // Reports prove they came back for an email with a token signed under a key derived from the same secret.
    const reportTokens = createReportTokens(trackingKey);

    // Temporal: the configured cluster, else the dev server with its database in the data dir.
    let temporalAddress = config.temporalAddress;
    let temporalUiUrl: string | undefined;
    if (!temporalAddress) {
      const cli = await locateTemporalCli({ cliPath: config.temporalCliPath, cacheDir: config.cacheDir, env, logger });
      if (!cli) {
        throw new Error(
          'No Temporal server: set TEMPORAL_ADDRESS, or install the Temporal CLI (https://docs.temporal.io/cli) on PATH or at TEMPORAL_CLI_PATH, ' +
            `or install Go so that it can be built once into ${config.cacheDir}.`,
        );
      }
      const dev = await startDevServer({
        cli, dataDir: config.dataDir, port: config.embeddedTemporalPort, namespace: config.temporalNamespace, ui: true, logger,
      });
      onStop(dev.stop);
      temporalAddress = dev.address;
      temporalUiUrl = dev.uiUrl;
    }
    const temporal: TemporalClient = await connectTemporal({
      address: temporalAddress, namespace: config.temporalNamespace, taskQueue: config.taskQueue,
      smtpRetry: { retries: config.smtpRetryAttempts, firstDelaySeconds: config.smtpRetryFirstSeconds },
    });
    onStop(temporal.close);

    const metrics = createMetrics();
    const now = () => new Date();
    const health = createHealthService({ accounts: repos.accounts, events: repos.events, logger, now });
    // Reports mailed back (API role's listener) and the catcher's simulated ones (worker role) take one path.
    const inboundFeedback = createInboundFeedbackService({
      emails: repos.emails, feedback: createFeedbackService({ events: repos.events, health, logger, now }), tokens: reportTokens, logger,
    });
    const startRetrier = createStartRetrier({ logger });
    onStop(async () => startRetrier.stop());
    const starters = createJobStarters({ temporal, scheduled: repos.scheduled, batches: repos.batches, retrier: startRetrier, logger });
    let dispatcher: Dispatcher | undefined;
    // Wakes dispatchers (this process's at once, others by NOTIFY) when emails enter the delivery queue.
    const queueNotifier = createQueueNotifier(sql, () => dispatcher, logger);
    let catcher: Catcher | undefined;

    if (runsWorker) {
      let smtpUrl = config.smtpUrl;
      if (!smtpUrl) {
        catcher = await startCatcher({
          host: '127.0.0.1', port: config.catcherPort, dataDir: config.dataDir, repo: repos.caught, logger,
          onSimulatedReport: (report) => inboundFeedback.receive(report),
        });
        onStop(catcher.close);
        smtpUrl = catcher.url;
      }
      const transport: MailTransport = createMailTransport(smtpUrl, { maxConnections: 8 });
      onStop(async () => transport.close());
      // The worker waits for a Temporal that is not up yet (the API role needs none to start: see client.ts).
      const worker: TemporalWorker = await retryAtStart({ what: 'Temporal', isTransient: isTemporalUnavailable, logger, attempt: () => createTemporalWorker({
        address: temporalAddress,
        namespace: config.temporalNamespace,
        taskQueue: config.taskQueue,
        activities: {
          ...createDeliveryActivities({
            emailDeliveries: repos.emailDeliveries, suppressions: repos.suppressions, transport, logger, metrics,
            rewriteForTracking: linkTracker.rewrite,
            reportToken: reportTokens.sign,
            judgeAccount: (accountId) => health.evaluate(accountId),
          }),
          ...createWebhookActivities({
            webhookDeliveries: repos.webhookDeliveries,
            post: (url, body, headers) => postWebhook(url, body, headers, { allowPrivate: config.webhookAllowPrivate }),
            logger,
          }),
          ...createJobActivities({ scheduled: repos.scheduled, batches: repos.batches, notifyQueued: () => queueNotifier() }),
        },
        bundle: config.workflowBundle ? { codePath: path.resolve(config.workflowBundle) } : undefined,
        logger,
      }) });
      const running = worker.run();
      running.catch((err: unknown) => logger.fatal({ err }, 'Temporal worker stopped'));
      onStop(worker.shutdown);
      dispatcher = createDispatcher({
        name: 'emails', queue: repos.emailDeliveries, channel: QUEUE_CHANNEL, groupKind: 'deliveryGroup',
        startGroup: (groupId, ids) => temporal.startDeliveryGroup(groupId, ids),
        listen: (channel, fn) => sql.listen(channel, fn),
        logger,
      });
      await dispatcher.start();
      onStop(dispatcher.stop);
      const webhookDispatcher = createDispatcher({
        name: 'webhook deliveries', queue: repos.webhookDeliveries, channel: WEBHOOK_QUEUE_CHANNEL, groupKind: 'webhookGroup',
        startGroup: (groupId, ids) => temporal.startWebhookGroup(groupId, ids),
        listen: (channel, fn) => sql.listen(channel, fn),
        logger,
      });
      await webhookDispatcher.start();
      onStop(webhookDispatcher.stop);
      const jobSweeper = createJobSweeper({ starters, scheduled: repos.scheduled, batches: repos.batches, notifyQueued: queueNotifier, logger });
      const periodicSweep = createPeriodicSweep({
        steps: [
          jobSweeper.sweep,
          // A reused key is answered afresh either way; this only keeps the table small.
          () => repos.idempotency.purgeExpired(IDEMPOTENCY_TTL_HOURS),
          // Recovery from review needs no new event, so nothing else would move those accounts.
          () => health.sweep(),
        ],
        logger,
      });
      periodicSweep.start();
      onStop(async () => periodicSweep.stop());
    }

    let restUrl: string | undefined;
    let grpcAddress: string | undefined;
    let inboundUrl: string | undefined;
    if (runsApi) {
      const inbound = await startInboundServer({
        host: config.host, port: config.inboundPort, logger,
        acceptsRecipient: inboundFeedback.acceptsRecipient, onMessage: inboundFeedback.receive,
      });
      onStop(inbound.close);
      inboundUrl = inbound.url;
      const usage = createUsageRecorder((d) => repos.apiKeys.addUsage(d), (err) => logger.warn({ err }, 'usage statistics not saved'));
      onStop(usage.close);
      const auth = createAuthService({
        findPrincipal: (h) => repos.apiKeys.findPrincipal(h), adminToken: admin.token, adminThrottle: createAuthThrottle(),
        metricsToken: config.metricsToken,
      });
      const accept = createAcceptance({
        quota: repos.quota, idempotency: createIdempotency(repos.idempotency), now,
        onUndoFailed: (err, what) => logger.warn({ err, what }, 'a failed send could not be undone: the quota or Idempotency-Key stays taken until the day or the key expires'),
      });
      const assertMaySendFrom = createSenderCheck(repos.domains);
      const send = createSendService({
        emails: repos.emails, accept, assertMaySendFrom, usage, notifyQueued: queueNotifier,
      });
      const guard = createGuard({ auth, rateLimiter: createRateLimiter(config.rateLimit), usage });
      const query = createEmailQueryService({ emails: repos.emails });
      const schedule = createScheduleService({
        scheduled: repos.scheduled, accept, assertMaySendFrom, usage, now,
        startWorkflow: starters.startScheduled,
      });
      const batch = createBatchService({ batches: repos.batches, accept, assertMaySendFrom, usage, startWorkflow: starters.startBatch });
      const emailApi = createEmailApi({ guard, send, query, schedule, batch });
      const adminApi = createAdminApi({
        auth,
        accounts: createAccountsService({ accounts: repos.accounts, health, now }),
        domains: createDomainsService({ domains: repos.domains, accounts: repos.accounts, resolveTxt: (name) => dns.resolveTxt(name).catch(() => []) }),
        apiKeys: createApiKeysService({ apiKeys: repos.apiKeys, accounts: repos.accounts, usage }),
        webhooks: createWebhooksService({
          webhooks: repos.webhooks, webhookDeliveries: repos.webhookDeliveries, accounts: repos.accounts,
          checkUrl: (u) => checkWebhookUrl(u, config.webhookAllowPrivate),
          sendTest: (webhook) => sendTestRequest(webhook, { allowPrivate: config.webhookAllowPrivate }),
        }),
        operator: createOperatorService({
          accounts: repos.accounts, owners: repos.owners, events: repos.events, suppressions: repos.suppressions, tracking: repos.tracking,
          query, schedule, batch,
        }),
        caught: createCaughtMailService({ caught: repos.caught }),
      });

      // One admin admission (token, throttle by client address) for REST and gRPC.
      const adminCall = async (ctx: CallContext) => admitAdmin(auth, ctx);
      const rest = await buildRestApp({
        emailApi, adminApi, logger, metrics, publicUrl: config.publicUrl,
        plugins: [trackingRoutes(createTrackingService({
          hits: repos.tracking, tokens: linkTracker, now, windowSeconds: config.trackingEventWindowSeconds,
          onError: (err) => logger.warn({ err }, 'tracking hit not recorded'),
        })), consolePlugin({ publicUrl: config.publicUrl })],
        admitApi: guard.admit,
        admitAdmin: adminCall,
        admitMetrics: (authorization) => auth.authenticateMetrics(authorization),
        checkReady: createReadiness({ database: () => repos.ping(), temporal: () => temporal.ping() }, logger).down,
      });
      const grpc = await buildGrpcApp({ emailApi, adminApi, admitApi: guard.admit, admitAdmin: adminCall, logger });
      restUrl = await listen(rest, config.host, config.port);
      onStop(() => rest.close());
      const grpcUrl = await listen(grpc, config.host, config.grpcPort);
      grpcAddress = grpcUrl.replace(/^https?:\/\//, '');
      onStop(() => grpc.close());
    }

    return {
      config, restUrl, grpcAddress, temporalAddress, temporalUiUrl, catcher, inboundUrl, databaseUrl, adminToken: admin.token,
      firstRun, adminTokenCreated: admin.created, sql, stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function listen(app: FastifyInstance, host: string, port: number): Promise<string> {
  await app.listen({ host, port });
  const address = app.server.address();
  const actual = typeof address === 'object' && address ? address.port : port;
  return `http://${host.includes(':') ? `[${host}]` : host}:${actual}`;
}

/**
 * Tells dispatchers that the queue has new entries: directly when one runs in this process, and by NOTIFY
 * for the others, at most one NOTIFY per few milliseconds however many emails arrive (NOTIFY takes a
 * global lock at commit).
 */
function createQueueNotifier(sql: Sql, local: () => Dispatcher | undefined, logger: Logger): () => void {
  const WINDOW_MS = 5;
  let scheduled = false;
  return () => {
    local()?.poke();
    if (scheduled) return;
    scheduled = true;
    setTimeout(() => {
      scheduled = false;
      // A lost NOTIFY costs latency only: every dispatcher also polls the queue each second.
      sql.notify(QUEUE_CHANNEL, '').catch((err: unknown) => logger.warn({ err }, 'queue NOTIFY failed; dispatchers will poll'));
    }, WINDOW_MS).unref();
  };
}
