import fs from 'node:fs/promises';
import { createAdminApi } from '../api/admin-api.js';
import { createEmailApi } from '../api/email-api.js';
import { createGuard } from '../api/guard.js';
import { createAccountsService } from '../services/accounts-service.js';
import { createAcceptance } from '../services/acceptance.js';
import { createApiKeysService } from '../services/api-keys-service.js';
import type { AuthService } from '../services/auth-service.js';
import { createBatchService } from '../services/batch-service.js';
import { createCaughtMailService } from '../services/caught-mail-service.js';
import { createDomainsService } from '../services/domains-service.js';
import { createErasureService } from '../services/erasure-service.js';
import { createErasureRepo } from '../db/index.js';
import { createErasureTracesRepo } from '../db/index.js';
import { createStatsRepo } from '../db/index.js';
import { createStatsService } from '../services/stats-service.js';
import { createEgressStatusService } from '../services/egress-status.js';
import { loadEgressRules } from '../delivery/egress/rules-file.js';
import { createEmailQueryService } from '../services/email-query-service.js';
import { createEventsService } from '../services/events-service.js';
import { createIdempotency } from '../services/idempotency.js';
import { createOperatorService } from '../services/operator-service.js';
import { createMemoryBuckets } from '../services/memory-buckets.js';
import { createRateLimiter } from '../services/rate-limiter.js';
import { createScheduleService } from '../services/schedule-service.js';
import { createSendService } from '../services/send-service.js';
import { createSenderCheck } from '../services/sender-check.js';
import { createSubmissionService } from '../services/submission-service.js';
import { createDraftPreparer } from '../services/draft-preparer.js';
import { createTemplateRenderer } from '../services/template-renderer.js';
import { PinnedVersions } from '../services/pinned-versions.js';
import { createTemplatesService } from '../services/templates-service.js';
import { createSuppressionsService } from '../services/suppressions-service.js';
import { createInboundEmailsService } from '../services/inbound-emails-service.js';
import { createInboundRoutesService } from '../services/inbound-routes-service.js';
import { compileTemplate } from '../templates/template-engine.js';
import type { UsageRecorder } from '../services/usage-recorder.js';
import { createWebhooksService } from '../services/webhooks-service.js';
import { signingSecrets } from '../db/index.js';
import { checkWebhookUrl } from '../webhooks/address-guard.js';
import { sendTestRequest } from '../webhooks/test-request.js';
import type { Core } from './start-core.js';
import { groupedQuotaReserve } from '../services/quota-reserver.js';

/** The API role's services under the shared handler set that both adapters (REST, gRPC) serve, and SMTP submission's. */
export function createHandlers(
  core: Core,
  deps: { auth: AuthService; usage: UsageRecorder; notifyQueued: () => void },
) {
  const { config, repos, now, logger } = core;
  const { auth, usage } = deps;
  const accept = createAcceptance({
    quota: { ...repos.quota, reserve: groupedQuotaReserve(repos.quota) },
    idempotency: createIdempotency(repos.idempotency),
    now,
    onUndoFailed: (err, what) =>
      logger.warn(
        { err, what },
        'a failed send could not be undone: the quota or Idempotency-Key stays taken until the day or the key expires',
      ),
    storedCount: repos.commitProbe.storedCount,
    onCommitUnknown: (e) =>
      logger.warn(e, 'the database went away while a send was being stored: asked again whether it was'),
  });
  const assertMaySendFrom = createSenderCheck({
    domains: repos.domains,
    dkimKeys: repos.dkimKeys,
    requireDkimRecord: config.delivery === 'direct',
  });
  // Every version is compiled before it is stored, so that one that does not compile is the create's 400.
  // Which version each template renders, kept while the API role listens for changes (start-api-role.ts).
  const templatePins = new PinnedVersions();
  const templates = createTemplatesService({
    templates: repos.templates,
    accounts: repos.accounts,
    checkCompiles: (c) => compileTemplate(c),
    onChange: (accountId) => templatePins.forgetAccount(accountId),
  });
  const renderer = createTemplateRenderer({ templates: repos.templates, service: templates, pins: templatePins });
  const drafts = createDraftPreparer(renderer);
  const send = createSendService({
    emails: repos.emails,
    accept,
    drafts,
    assertMaySendFrom,
    usage,
    notifyQueued: deps.notifyQueued,
  });
  // One bucket per key for all API processes (in PostgreSQL); each process's own while PostgreSQL is unreachable.
  const rateLimiter = createRateLimiter({
    rate: config.rateLimit,
    store: repos.rateBuckets,
    fallback: createMemoryBuckets(),
    onStoreDown: (err) =>
      logger.warn(
        { err },
        'rate limit: PostgreSQL unreachable, each API process limits on its own until it answers again',
      ),
    onStoreBack: () => logger.info('rate limit: shared buckets in PostgreSQL again'),
  });
  const guard = createGuard({ auth, rateLimiter, usage });
  // SMTP submission sends through the same services, rate limit and usage statistics as the API.
  const submission = createSubmissionService({ auth, rateLimiter, usage, send, assertMaySendFrom });
  const query = createEmailQueryService({ emails: repos.emails });
  const schedule = createScheduleService({
    scheduled: repos.scheduled,
    accept,
    drafts,
    assertMaySendFrom,
    usage,
    now,
    startWorkflow: core.starters.startScheduled,
  });
  const batch = createBatchService({
    batches: repos.batches,
    accept,
    drafts,
    assertMaySendFrom,
    usage,
    startWorkflow: core.starters.startBatch,
  });
  const events = createEventsService({ feed: repos.eventFeed });
  const suppressions = createSuppressionsService({ suppressions: repos.suppressions, accounts: repos.accounts });
  // Inbound mail (issue 26): what each API's inbound RPCs use.
  const inboundRoutes = {
    inboundRoutes: createInboundRoutesService({
      routes: repos.inboundRoutes,
      domains: repos.domains,
      accounts: repos.accounts,
    }),
  };
  const inboundEmails = {
    inboundEmails: createInboundEmailsService({
      reads: repos.inboundReads,
      blobs: repos.inboundBlobs,
      accounts: repos.accounts,
    }),
  };
  // Shared by both APIs: the admin API is the same services with the account named in the path.
  const accountsService = createAccountsService({ accounts: repos.accounts, health: core.health, now });
  const domainsService = createDomainsService({
    domains: repos.domains,
    dkimKeys: repos.dkimKeys,
    inboundRoutes: repos.inboundRoutes,
    accounts: repos.accounts,
    dkim: core.dkimProvisioning,
    checks: core.domainChecks,
    publish: core.publish,
    onDeleted: (accountId, name) => assertMaySendFrom.forget(accountId, name),
  });
  const apiKeysService = createApiKeysService({
    apiKeys: repos.apiKeys,
    accounts: repos.accounts,
    usage,
    maxRateLimit: config.rateLimit,
    now,
  });
  const webhooksService = createWebhooksService({
    webhooks: repos.webhooks,
    webhookDeliveries: repos.webhookDeliveries,
    accounts: repos.accounts,
    checkUrl: (u) => checkWebhookUrl(u, config.webhookAllowPrivate),
    sendTest: (webhook) =>
      sendTestRequest({ ...webhook, secrets: signingSecrets(webhook) }, { allowPrivate: config.webhookAllowPrivate }),
  });
  // GET /stats for both APIs: the rollup the worker folds, plus what it has not folded yet.
  const stats = { stats: createStatsService({ stats: createStatsRepo(core.sql), accounts: repos.accounts, now }) };
  const selfService = { accounts: accountsService, domains: domainsService, webhooks: webhooksService };
  const emailApi = createEmailApi({
    guard,
    send,
    query,
    schedule,
    batch,
    events,
    templates: { templates, renderer },
    suppressions,
    inboundRoutes,
    inboundEmails,
    selfService,
    apiKeys: { apiKeys: apiKeysService },
    stats,
    timeline: { events, renderer },
  });
  const adminApi = createAdminApi({
    auth,
    accounts: accountsService,
    domains: domainsService,
    apiKeys: apiKeysService,
    webhooks: webhooksService,
    operator: createOperatorService({
      accounts: repos.accounts,
      owners: repos.owners,
      events: repos.events,
      suppressions: repos.suppressions,
      tracking: repos.tracking,
      query,
      schedule,
      batch,
    }),
    caught: createCaughtMailService({ caught: repos.caught }),
    templates: { templates, renderer },
    suppressions,
    inboundRoutes,
    inboundEmails,
    selfService,
    stats,
    // Egress shaping's state for the operator: the rules file read on each call as the workers read it (their
    // EHLO default MAILER_HOSTNAME), beside what the workers write to egress_sites.
    egress: {
      egress: createEgressStatusService({
        state: repos.egress,
        loadRules: () => loadEgressRules(config.egressRules, config.egressPools, config.hostname),
        now,
      }),
    },
    erasure: createErasureService({
      erasure: createErasureRepo(core.sql),
      traces: createErasureTracesRepo(core.sql),
      accounts: repos.accounts,
      settings: repos.settings,
      removeFile: (file) => fs.rm(file, { force: true }),
      logger,
    }),
  });
  return { emailApi, adminApi, guard, submission, templatePins };
}
