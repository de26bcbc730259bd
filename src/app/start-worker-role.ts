import fs from 'node:fs/promises';
import path from 'node:path';
import { IDEMPOTENCY_TTL_HOURS } from '../domain/limits.js';
import type { Catcher } from '../local/catcher.js';
import { returnPathAddress } from '../delivery/message/return-path.js';
import { listUnsubscribeOf } from '../delivery/message/unsubscribe-token.js';
import { returnPathDomain } from '../domain/return-path-domain.js';
import type { MailTransport } from '../delivery/transport/transport.js';
import { retryAtStart } from '../retry-at-start.js';
import { createDeliveryActivities } from '../delivery/delivery-activities.js';
import type { DeliveryDeps } from '../delivery/delivery-deps.js';
import { createEmailSender } from '../delivery/email-sender.js';
import { createScheduledPreparer } from '../delivery/message/scheduled-preparer.js';
import { createPrebuiltMessages } from '../delivery/message/prebuilt-messages.js';
import { createDomainActivities } from '../temporal/domain-activities.js';
import { createJobActivities } from '../temporal/job-activities.js';
import { createJobSweeper } from '../temporal/job-sweeper.js';
import { createPeriodicSweep } from '../temporal/periodic-sweep.js';
import { createRetentionActivities } from '../temporal/retention-activities.js';
import { createRetentionRepo } from '../db/index.js';
import { createStatsRepo } from '../db/index.js';
import { createStatsFold } from '../services/stats-service.js';
import { createRetentionService } from '../services/retention-service.js';
import { isTemporalUnavailable } from '../temporal/temporal-unavailable.js';
import { createWebhookActivities } from '../webhooks/webhook-activities.js';
import { createTemporalWorker, type TemporalWorker } from '../temporal/worker.js';
import { postWebhook } from '../webhooks/post.js';
import type { Dispatchers } from './create-dispatchers.js';
import { buildProbeApp } from '../http/probe-routes.js';
import { metricsGate } from '../services/auth-service.js';
import { createReadiness } from '../services/readiness-service.js';
import { listen } from './listen.js';
import { createOutboundTransport } from './outbound-transport.js';
import { provisionSmtp } from './provision-local.js';
import type { Core } from './start-core.js';
import type { StopList } from './stop-list.js';

/**
 * The worker role: the Temporal worker with its activities, the dispatchers that hand queued emails and
 * webhook deliveries to workflows, and the sweeper of scheduled jobs and expired keys.
 */
export async function startWorkerRole(
  core: Core,
  { dispatchers, notifyQueued }: { dispatchers: Dispatchers; notifyQueued: () => void },
  stops: StopList,
): Promise<{ catcher: Catcher | undefined; probeUrl: string | undefined }> {
  const { config, repos, health, logger } = core;
  const { smtpUrl, catcher } = await provisionSmtp(
    config,
    {
      caught: repos.caught,
      logger,
      onSimulatedReport: (report, rcptTo) => core.inboundFeedback.receive(report, { rcptTo, simulated: true }),
    },
    stops,
  );
  const outbound = createOutboundTransport(config, smtpUrl, { egressRepo: repos.egress, logger });
  const transport: MailTransport = outbound.transport;
  stops.onStop(outbound.close);
  // The worker waits for a Temporal that is not up yet (the API role needs none to start: see client.ts).
  const worker: TemporalWorker = await retryAtStart({
    what: 'Temporal',
    isTransient: isTemporalUnavailable,
    logger,
    attempt: () => createWorker(core, transport, notifyQueued),
  });
  const running = worker.run();
  running.catch((err: unknown) => logger.fatal({ err }, 'Temporal worker stopped'));
  stops.onStop(worker.shutdown);
  // Not fatal: the service works without the re-check, and the next start (of any worker) tries again.
  await core.temporal
    .ensureDnsRecheckSchedule(config.dnsRecheckMinutes)
    .catch((err: unknown) =>
      logger.warn({ err }, 'could not create the schedule of the periodic DNS re-check of domains'),
    );
  await core.temporal
    .ensureRetentionSchedule()
    .catch((err: unknown) =>
      logger.warn({ err }, 'could not create the schedule of retention (the removal of expired content and history)'),
    );
  for (const dispatcher of [dispatchers.emails, dispatchers.webhooks]) {
    await dispatcher.start();
    stops.onStop(dispatcher.stop);
  }
  const jobSweeper = createJobSweeper({
    starters: core.starters,
    scheduled: repos.scheduled,
    batches: repos.batches,
    notifyQueued,
    logger,
    metrics: core.metrics,
  });
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
  stops.onStop(async () => periodicSweep.stop());
  // GET /stats reads the rollup plus what is not folded yet: folding often keeps that tail short.
  const statsFold = createPeriodicSweep({
    steps: [createStatsFold({ stats: createStatsRepo(core.sql), logger })],
    logger,
    everyMs: config.statsFoldSeconds * 1000,
    name: 'stats fold',
  });
  statsFold.start();
  stops.onStop(async () => statsFold.stop());
  return { catcher, probeUrl: config.role === 'worker' ? await startProbes(core, stops) : undefined };
}

/** A worker process's own /healthz, /readyz and /metrics (an `all` process serves them on the REST port). */
async function startProbes(core: Core, stops: StopList): Promise<string> {
  const { config, repos, logger } = core;
  const app = await buildProbeApp({
    metrics: core.metrics,
    logger,
    admitMetrics: metricsGate(config.metricsToken),
    checkReady: createReadiness({ database: () => repos.ping(), temporal: () => core.temporal.ping() }, logger).down,
  });
  const url = await listen(app, config.host, config.workerPort);
  stops.onStop(() => app.close());
  return url;
}

/** Scheduled emails' messages built ahead, at most this much of them at once, each kept at most this long. */
const PREBUILT_BYTES = 128 * 1024 * 1024;
const PREBUILT_TTL_MS = 5 * 60_000;

function createWorker(core: Core, transport: MailTransport, notifyQueued: () => void): Promise<TemporalWorker> {
  const { config, repos, logger } = core;
  const prebuilt = createPrebuiltMessages({ maxBytes: PREBUILT_BYTES, ttlMs: PREBUILT_TTL_MS });
  const deliveryDeps: DeliveryDeps = {
    emailDeliveries: repos.emailDeliveries,
    suppressions: repos.suppressions,
    transport,
    logger,
    metrics: core.metrics,
    rewriteForTracking: core.linkTracker.rewrite,
    reportToken: core.reportTokens.sign,
    recipientToken: core.reportTokens.signRecipient,
    returnPath: (token, senderDomain) =>
      returnPathAddress(token, returnPathDomain(senderDomain, config.returnPathDomain)),
    // The mailto address at the return-path domain: its MX is the inbound listener, which takes `unsub-` mail too.
    listUnsubscribe: (emailId, senderDomain) =>
      listUnsubscribeOf(
        core.unsubscribeTokens,
        emailId,
        config.trackingUrl,
        returnPathDomain(senderDomain, config.returnPathDomain),
      ),
    dkimKey: core.dkim.signingKey,
    prebuilt,
    judgeAccount: (accountId) => core.health.evaluate(accountId),
  };
  // One sender for delivery and for building scheduled emails ahead: the messages are built the same way.
  const sender = createEmailSender(deliveryDeps);
  const preparer = createScheduledPreparer({
    scheduled: repos.scheduled,
    buildAhead: sender.buildAhead,
    prebuilt,
    logger,
  });
  return createTemporalWorker({
    address: core.temporalAddress,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    activities: {
      ...createDeliveryActivities(deliveryDeps, sender),
      ...createWebhookActivities({
        webhookDeliveries: repos.webhookDeliveries,
        post: (url, body, headers) => postWebhook(url, body, headers, { allowPrivate: config.webhookAllowPrivate }),
        logger,
        disableThreshold: { discards: config.webhookDisableAfterDiscards, hours: config.webhookDisableAfterHours },
        metrics: core.metrics,
      }),
      ...createJobActivities({
        scheduled: repos.scheduled,
        batches: repos.batches,
        notifyQueued: () => notifyQueued(),
        metrics: core.metrics,
        preparer,
      }),
      ...createDomainActivities({ checks: core.domainChecks, recheckMinutes: config.dnsRecheckMinutes }),
      ...createRetentionActivities({
        retention: createRetentionService({
          repo: createRetentionRepo(core.sql),
          removeFile: (file) => fs.rm(file, { force: true }),
          logger,
        }),
        policy: { contentDays: config.retentionContentDays, eventsDays: config.retentionEventsDays },
      }),
    },
    bundle: config.workflowBundle ? { codePath: path.resolve(config.workflowBundle) } : undefined,
    logger,
    tracing: core.tracing,
  });
}
