import type { SecretBox } from '../../domain/sealed-values.js';
import type { Sql } from '../sql.js';
import { createAccountsRepo } from './accounts-repo.js';
import { createApiKeysRepo } from './api-keys-repo.js';
import { createBatchRepo } from './batch-repo.js';
import { createCaughtMessagesRepo } from './caught-messages-repo.js';
import { createCommitProbe } from './commit-probe.js';
import { createConsoleSessionsRepo } from './console-sessions-repo.js';
import { createDkimKeysRepo } from './dkim-keys-repo.js';
import { createEmailDeliveriesRepo } from './email-deliveries-repo.js';
import { createDomainsRepo } from './domains-repo.js';
import { createEgressRepo } from './egress-repo.js';
import { createEmailsRepo } from './emails-repo.js';
import { createEventFeedRepo } from './event-feed-repo.js';
import { createEventsRepo } from './events-repo.js';
import { createIdempotencyRepo } from './idempotency-repo.js';
import { createInboundBlobsRepo } from './inbound-blobs-repo.js';
import { createInboundReceiveRepo } from './inbound-receive-repo.js';
import { createInboundReadsRepo } from './inbound-reads-repo.js';
import { createInboundRoutesRepo } from './inbound-routes-repo.js';
import { createOwnersRepo } from './owners-repo.js';
import { createQuotaRepo } from './quota-repo.js';
import { createRateBucketsRepo } from './rate-buckets-repo.js';
import { createScheduledRepo } from './scheduled-repo.js';
import { createSettingsRepo } from './settings-repo.js';
import { createSuppressionsRepo } from './suppressions-repo.js';
import { createTemplatesRepo } from './templates-repo.js';
import { createTrackingRepo } from './tracking-repo.js';
import { createUnsubscribesRepo } from './unsubscribes-repo.js';
import { createWebhookDeliveriesRepo } from './webhook-deliveries-repo.js';
import { createWebhooksRepo } from './webhooks-repo.js';

/** Every repository over one pool; `box` seals the secrets they store (webhook secrets, secret settings). */
export function createRepos(sql: Sql, box: SecretBox) {
  return {
    accounts: createAccountsRepo(sql),
    apiKeys: createApiKeysRepo(sql),
    batches: createBatchRepo(sql),
    caught: createCaughtMessagesRepo(sql),
    commitProbe: createCommitProbe(sql),
    consoleSessions: createConsoleSessionsRepo(sql),
    dkimKeys: createDkimKeysRepo(sql),
    emailDeliveries: createEmailDeliveriesRepo(sql),
    domains: createDomainsRepo(sql),
    egress: createEgressRepo(sql),
    emails: createEmailsRepo(sql),
    events: createEventsRepo(sql),
    eventFeed: createEventFeedRepo(sql),
    idempotency: createIdempotencyRepo(sql),
    inboundBlobs: createInboundBlobsRepo(sql),
    inboundReceive: createInboundReceiveRepo(sql),
    inboundReads: createInboundReadsRepo(sql),
    inboundRoutes: createInboundRoutesRepo(sql),
    owners: createOwnersRepo(sql),
    quota: createQuotaRepo(sql),
    rateBuckets: createRateBucketsRepo(sql),
    scheduled: createScheduledRepo(sql),
    settings: createSettingsRepo(sql, box),
    suppressions: createSuppressionsRepo(sql),
    templates: createTemplatesRepo(sql),
    tracking: createTrackingRepo(sql),
    unsubscribes: createUnsubscribesRepo(sql),
    webhookDeliveries: createWebhookDeliveriesRepo(sql, box),
    webhooks: createWebhooksRepo(sql, box),
    /** Readiness: the database answers. */
    async ping(): Promise<void> {
      await sql`select 1`;
    },
  };
}
export type Repos = ReturnType<typeof createRepos>;
