import crypto from 'node:crypto';
import type { Config } from '../config.js';
import { isDatabaseUnavailable } from '../db/db-unavailable.js';
import { migrate } from '../db/migrate.js';
import { createRepos, type Repos } from '../db/index.js';
import { createSeedRepo } from '../db/index.js';
import { createSql, type Sql } from '../db/sql.js';
import type { Logger } from '../logger.js';
import type { PublishSettings } from '../domain/dns-records.js';
import { generateDkimKeyPair } from '../delivery/dkim/dkim-key.js';
import { createDkimKeyring, type DkimKeyring } from '../delivery/dkim/dkim-keyring.js';
import { createDnsResolver, type DnsResolver } from '../net/dns-resolver.js';
import { createFeedbackSources } from '../inbound/feedback-sources.js';
import { loadEncryptionKey } from '../secrets/encryption-key.js';
import { createKeyBox, type KeyBox } from '../secrets/key-box.js';
import { createReportTokens, type ReportTokens } from '../delivery/message/report-token.js';
import { createLinkTracker, type LinkTracker } from '../delivery/message/tracking.js';
import { createUnsubscribeTokens, type UnsubscribeTokens } from '../delivery/message/unsubscribe-token.js';
import { warnOfSharedTrackingHost } from '../http/tracking-host.js';
import { createMetrics, type Metrics } from '../metrics.js';
import { tightenDataDir } from '../private-dir.js';
import { dataDirMode, holdsEmbeddedPostgres } from '../local/data-dir.js';
import { retryAtStart } from '../retry-at-start.js';
import { keepFirstRun, loadAdminToken, seedIfEmpty, type FirstRun } from '../services/bootstrap-service.js';
import { createDkimProvisioning, type DkimProvisioning } from '../services/dkim-provisioning.js';
import { createDomainDnsCheck, type DomainDnsCheck } from '../services/domain-dns-check.js';
import { createFeedbackService } from '../services/feedback-service.js';
import { createHealthService, type HealthService } from '../services/health-service.js';
import { createInboundFeedbackService, type InboundFeedbackService } from '../services/inbound-feedback-service.js';
import { startTracing, type Tracing } from '../telemetry/tracing.js';
import { connectTemporal, type TemporalClient } from '../temporal/client.js';
import { createJobStarters, type JobStarters } from '../temporal/job-starters.js';
import { createStartRetrier } from '../temporal/start-retrier.js';
import { sealedContext } from '../domain/sealed-values.js';
import { provisionDatabase, provisionTemporal } from './provision-local.js';
import { warnOfDirectSendersWithoutDkim } from './direct-senders.js';
import { assertInstallationKey, sealStoredSecrets } from './sealed-at-rest.js';
import type { StopList } from './stop-list.js';

/** What both roles share: the migrated database, the Temporal client, and the services either role calls. */
export interface Core {
  config: Config;
  logger: Logger;
  databaseUrl: string;
  sql: Sql;
  repos: Repos;
  /** Set on the run that created the default account. */
  firstRun: FirstRun | undefined;
  admin: { token: string; created: boolean };
  linkTracker: LinkTracker;
  reportTokens: ReportTokens;
  /** Signs and checks broadcast mail's one-click unsubscribe tokens (a key of their own, derived from the tracking secret). */
  unsubscribeTokens: UnsubscribeTokens;
  /** Seals and opens the secrets stored in the database (DKIM private keys, ...) under the installation's encryption key. */
  keyBox: KeyBox;
  /** The send path's DKIM keys: the active key of an account's From domain, opened. */
  dkim: DkimKeyring;
  /** Making domains' DKIM keys (when added, rotated, or missing). */
  dkimProvisioning: DkimProvisioning;
  /** Lookups through MAILER_DNS_SERVERS (domain checks; direct delivery's MX lookups). */
  dnsResolver: DnsResolver;
  /** What every domain publishes, from the settings. */
  publish: PublishSettings;
  /** Looking a domain's records up and storing their statuses (verify, and the periodic re-check). */
  domainChecks: DomainDnsCheck;
  temporalAddress: string;
  temporalUiUrl: string | undefined;
  temporal: TemporalClient;
  metrics: Metrics;
  now: () => Date;
  health: HealthService;
  inboundFeedback: InboundFeedbackService;
  starters: JobStarters;
  /** OpenTelemetry tracing (on when an OTLP endpoint is set). */
  tracing: Tracing;
}

export async function startCore(
  config: Config,
  logger: Logger,
  env: NodeJS.ProcessEnv,
  stops: StopList,
): Promise<Core> {
  // First started, last stopped: the spans of everything stopping are still sent.
  const tracing = startTracing(config, logger);
  stops.onStop(tracing.stop);
  await tightenDataDir(
    config.dataDir,
    dataDirMode(!config.databaseUrl || (await holdsEmbeddedPostgres(config.dataDir))),
    logger,
  );
  const { databaseUrl, sql, firstRun } = await openDatabase(config, logger, stops);
  const admin = await loadAdminToken(config.adminToken, config.dataDir);
  const encryption = await loadEncryptionKey(config.encryptionKey, config.dataDir);
  if (encryption.created)
    logger.info(
      { dataDir: config.dataDir },
      'generated the encryption key of the secrets stored in the database into the data dir (back it up with the database)',
    );
  const keyBox = createKeyBox(encryption.key);
  const repos = createRepos(sql, keyBox);
  // Before anything is sealed or opened: a process with another key than the installation's stops here.
  await assertInstallationKey(repos, keyBox);
  await sealStoredSecrets(repos, keyBox, logger);
  // The worker signs tracking links and the API checks them, maybe in other processes: one key, in the database (sealed).
  const trackingKey = await repos.settings.getOrCreateSecret('tracking_key', () =>
    crypto.randomBytes(32).toString('base64url'),
  );
  // Links in mail point at MAILER_TRACKING_URL, a host apart from the console's (http/tracking-host.ts).
  const linkTracker = createLinkTracker({ baseUrl: config.trackingUrl, key: trackingKey });
  warnOfSharedTrackingHost(config, logger);
  // Reports prove they came back for an email with a token signed under a key derived from the same secret.
  const reportTokens = createReportTokens(trackingKey);
  // The worker signs unsubscribe tokens, the API (URL and mailto address) checks them: the same shared secret.
  const unsubscribeTokens = createUnsubscribeTokens(trackingKey);

  const { address: temporalAddress, uiUrl: temporalUiUrl } = await provisionTemporal(config, env, logger, stops);
  const temporal = await connectTemporal({
    address: temporalAddress,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    smtpRetry: { retries: config.smtpRetryAttempts, firstDelaySeconds: config.smtpRetryFirstSeconds },
    tracing,
  });
  stops.onStop(temporal.close);

  const now = () => new Date();
  const metrics = createMetrics({
    queueStats: (timeoutMs) => repos.emailDeliveries.queueStats(timeoutMs),
    onQueueError: (err) => logger.debug({ err }, 'delivery queue not read for /metrics'),
    dnsFailingDomains: (timeoutMs) => repos.domains.countDnsFailing(timeoutMs),
    onDomainsError: (err) => logger.debug({ err }, 'domains whose DNS fails not counted for /metrics'),
  });
  const auth = await domainAuthentication(config, repos, keyBox, logger, now);
  const health = createHealthService({ accounts: repos.accounts, events: repos.events, logger, now });
  // Reports mailed back (API role's listener) and the catcher's simulated ones (worker role) take one path.
  const sources = createFeedbackSources(config.fblSources, auth.dnsResolver);
  if (!sources.configured && config.delivery !== 'catcher') {
    logger.info(
      "MAILER_FBL_SOURCES is unset: complaint reports are recorded and suppress their recipient, but none moves an account's health",
    );
  }
  const inboundFeedback = createInboundFeedbackService({
    emails: repos.emails,
    feedback: createFeedbackService({ events: repos.events, health, logger, now, metrics }),
    tokens: reportTokens,
    sources,
    logger,
    metrics,
  });
  const startRetrier = createStartRetrier({ logger });
  stops.onStop(async () => startRetrier.stop());
  const starters = createJobStarters({
    temporal,
    scheduled: repos.scheduled,
    batches: repos.batches,
    retrier: startRetrier,
    logger,
  });
  return {
    config,
    logger,
    databaseUrl,
    sql,
    repos,
    firstRun,
    admin,
    linkTracker,
    reportTokens,
    unsubscribeTokens,
    keyBox,
    temporalAddress,
    temporalUiUrl,
    temporal,
    metrics,
    now,
    health,
    inboundFeedback,
    starters,
    tracing,
    ...auth,
  };
}

/**
 * DKIM keys and DNS checks of sender domains. Domains without a key (added before keys existed, or the
 * seeded default domain) get one here, before the service answers: their records then list it.
 */
async function domainAuthentication(config: Config, repos: Repos, keyBox: KeyBox, logger: Logger, now: () => Date) {
  const publish: PublishSettings = {
    hostname: config.hostname,
    spfInclude: config.spfInclude,
    returnPathDomain: config.returnPathDomain,
  };
  const dnsResolver = createDnsResolver(config.dnsServers);
  const dkimProvisioning = createDkimProvisioning({
    dkimKeys: repos.dkimKeys,
    generate: generateDkimKeyPair,
    seal: (pem, keyId) => keyBox.seal(pem, sealedContext.dkimPrivateKey(keyId)),
    now,
    logger,
  });
  await dkimProvisioning.backfill();
  await warnOfDirectSendersWithoutDkim(config, repos.dkimKeys, logger);
  const dkim = createDkimKeyring({ lookup: repos.dkimKeys.sealedSigningKey, keyBox });
  const domainChecks = createDomainDnsCheck({
    domains: repos.domains,
    dkimKeys: repos.dkimKeys,
    inboundRoutes: repos.inboundRoutes,
    resolver: dnsResolver,
    publish,
    now,
    logger,
  });
  return { dkim, dkimProvisioning, dnsResolver, publish, domainChecks };
}

/** Connects, and migrates (seeding an empty database), waiting for a database still down or restarting. */
async function openDatabase(
  config: Config,
  logger: Logger,
  stops: StopList,
): Promise<{ databaseUrl: string; sql: Sql; firstRun: FirstRun | undefined }> {
  const databaseUrl = await provisionDatabase(config, logger, stops);
  const sql = createSql(databaseUrl, { max: 40 });
  stops.onStop(() => sql.end({ timeout: 5 }));
  let firstRun: FirstRun | undefined;
  let keptIn: string | undefined;
  await retryAtStart({
    what: 'database',
    isTransient: isDatabaseUnavailable,
    logger,
    attempt: () =>
      migrate(sql, logger, async (tx) => {
        firstRun = await seedIfEmpty(createSeedRepo(tx), config.defaultDomain);
        // Before the key commits: so that it outlives a process stopped before its banner.
        keptIn = firstRun ? await keepFirstRun(config.dataDir, firstRun, logger) : undefined;
      }),
  });
  if (firstRun) {
    // Where the key is, never the key: log lines are shipped and kept where secrets should not be.
    logger.info(
      { accountId: firstRun.accountId, domain: firstRun.domain, keptIn },
      'first run: created the default account and its API key, which the banner shows (kept in the data dir until then)',
    );
  }
  return { databaseUrl, sql, firstRun };
}
