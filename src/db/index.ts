/**
 * The database module as the rest of the service sees it: the repositories (created over one pool by
 * createRepos) and their types. Entities they read and write are domain types (src/domain/entities/); the
 * files under repos/ are this module's inside and nothing outside src/db/ imports them.
 */
export { createAccountsRepo } from './repos/accounts-repo.js';
export type { AccountsRepo } from './repos/accounts-repo.js';
export { ADDRESS_DIGEST_SALT } from './repos/address-digest.js';
export { createApiKeysRepo } from './repos/api-keys-repo.js';
export type { ApiKeysRepo } from './repos/api-keys-repo.js';
export { createBatchRepo } from './repos/batch-repo.js';
export type { BatchRepo } from './repos/batch-repo.js';
export type { CaughtMessagesRepo } from './repos/caught-messages-repo.js';
export type { AcceptedTable } from './repos/commit-probe.js';
export { outcomeKey, recordOutcomes } from './repos/delivery-outcomes.js';
export { createDkimKeysRepo } from './repos/dkim-keys-repo.js';
export type { DkimKeysRepo } from './repos/dkim-keys-repo.js';
export type { DomainsRepo } from './repos/domains-repo.js';
export { createEmailDeliveriesRepo } from './repos/email-deliveries-repo.js';
export type { EmailDeliveriesRepo } from './repos/email-deliveries-repo.js';
export { createEmailsRepo } from './repos/emails-repo.js';
export type { EmailsRepo } from './repos/emails-repo.js';
export { createErasureRepo, noErasure } from './repos/erasure-repo.js';
export type { ErasureRepo } from './repos/erasure-repo.js';
export { createErasureTracesRepo } from './repos/erasure-traces-repo.js';
export type { ErasureTracesRepo } from './repos/erasure-traces-repo.js';
export type { EventFeedRepo } from './repos/event-feed-repo.js';
export type { EventsRepo } from './repos/events-repo.js';
export { createIdempotencyRepo } from './repos/idempotency-repo.js';
export type { IdempotencyRepo } from './repos/idempotency-repo.js';
export { BLOB_CHUNK_BYTES } from './repos/inbound-blobs-repo.js';
export type { InboundBlobsRepo } from './repos/inbound-blobs-repo.js';
export { replyCandidates } from './repos/inbound-receive-repo.js';
export type { InboundReceiveRepo, NewInboundEmail, RecordedInbound } from './repos/inbound-receive-repo.js';
export type { InboundReadsRepo } from './repos/inbound-reads-repo.js';
export { createInboundRoutesRepo } from './repos/inbound-routes-repo.js';
export type { InboundRoutesRepo } from './repos/inbound-routes-repo.js';
export { createRepos } from './repos/index.js';
export type { Repos } from './repos/index.js';
export { COUNTED_LISTS } from './repos/list-counts.js';
export type { OwnersRepo } from './repos/owners-repo.js';
export type { QuotaRepo } from './repos/quota-repo.js';
export { createRateBucketsRepo } from './repos/rate-buckets-repo.js';
export { createRetentionRepo } from './repos/retention-repo.js';
export type { RetentionRepo } from './repos/retention-repo.js';
export { createScheduledRepo } from './repos/scheduled-repo.js';
export type { ScheduledRepo } from './repos/scheduled-repo.js';
export { createSeedRepo } from './repos/seed-repo.js';
export type { SettingsRepo } from './repos/settings-repo.js';
export type { SuppressionsRepo } from './repos/suppressions-repo.js';
export { createTemplatesRepo, TEMPLATES_CHANNEL } from './repos/templates-repo.js';
export type { TemplatesRepo, VersionPick } from './repos/templates-repo.js';
export { createTrackingRepo } from './repos/tracking-repo.js';
export type { TrackingRepo } from './repos/tracking-repo.js';
export type { UnsubscribesRepo } from './repos/unsubscribes-repo.js';
export { WEBHOOK_QUEUE_CHANNEL } from './repos/webhook-deliveries-repo.js';
export type { WebhookDeliveriesRepo } from './repos/webhook-deliveries-repo.js';
export { createWebhooksRepo, signingSecrets } from './repos/webhooks-repo.js';
export type { WebhooksRepo } from './repos/webhooks-repo.js';
