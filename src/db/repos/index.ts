import type { Sql } from '../sql.js';
import { createAccountsRepo } from './accounts-repo.js';
import { createApiKeysRepo } from './api-keys-repo.js';
import { createBatchRepo } from './batch-repo.js';
import { createCaughtMessagesRepo } from './caught-messages-repo.js';
import { createDeliveriesRepo } from './deliveries-repo.js';
import { createDomainsRepo } from './domains-repo.js';
import { createEmailsRepo } from './emails-repo.js';
import { createIdempotencyRepo } from './idempotency-repo.js';
import { createQuotaRepo } from './quota-repo.js';
import { createScheduledRepo } from './scheduled-repo.js';
import { createWebhooksRepo } from './webhooks-repo.js';

/** Every repository over one pool. */
export function createRepos(sql: Sql) {
  return {
    accounts: createAccountsRepo(sql),
    apiKeys: createApiKeysRepo(sql),
    batches: createBatchRepo(sql),
    caught: createCaughtMessagesRepo(sql),
    deliveries: createDeliveriesRepo(sql),
    domains: createDomainsRepo(sql),
    emails: createEmailsRepo(sql),
    idempotency: createIdempotencyRepo(sql),
    quota: createQuotaRepo(sql),
    scheduled: createScheduledRepo(sql),
    webhooks: createWebhooksRepo(sql),
    /** Readiness: the database answers. */
    async ping(): Promise<void> {
      await sql`select 1`;
    },
  };
}
export type Repos = ReturnType<typeof createRepos>;
