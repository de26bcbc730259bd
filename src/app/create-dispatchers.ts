import type { Config } from '../config.js';
import type { Repos } from '../db/index.js';
import { WEBHOOK_QUEUE_CHANNEL } from '../db/index.js';
import type { Sql } from '../db/sql.js';
import type { IdKind } from '../ids.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { TemporalClient } from '../temporal/client.js';
import {
  createDispatcher,
  EMAIL_GROUPS,
  QUEUE_CHANNEL,
  type Dispatcher,
  type DispatcherDeps,
  type GroupQueue,
} from '../delivery/queue/dispatcher.js';
import { createWebhookAttempt } from '../webhooks/webhook-attempt.js';
import { createWebhookDispatcher } from '../webhooks/webhook-dispatcher.js';
import { postWebhook } from '../webhooks/post.js';

export interface Dispatchers {
  emails: Dispatcher;
  webhooks: Dispatcher;
}

/**
 * The worker's two outbox dispatchers (emails, webhook deliveries), built but not started: the email one
 * exists before anything can queue an email, so whatever queues one can poke it directly.
 */
export function createDispatchers(deps: {
  config: Config;
  repos: Repos;
  temporal: TemporalClient;
  sql: Sql;
  logger: Logger;
  metrics: Metrics;
}): Dispatchers {
  const { config, repos, temporal, sql, logger, metrics } = deps;
  const outbox = (
    name: string,
    queue: GroupQueue,
    channel: string,
    groupKind: IdKind,
    startGroup: (groupId: string, ids: string[]) => Promise<boolean>,
    groups?: DispatcherDeps['groups'],
  ) =>
    createDispatcher({
      name,
      queue,
      channel,
      groupKind,
      startGroup,
      listen: (c, fn) => sql.listen(c, fn),
      logger,
      ...(groups ? { groups } : {}),
    });
  return {
    emails: outbox(
      'emails',
      repos.emailDeliveries,
      QUEUE_CHANNEL,
      'deliveryGroup',
      (groupId, ids) => temporal.startDeliveryGroup(groupId, ids),
      EMAIL_GROUPS,
    ),
    // Makes each delivery's first attempt itself; workflows run the retries (webhook-dispatcher.ts).
    webhooks: createWebhookDispatcher({
      queue: repos.webhookDeliveries,
      attempt: createWebhookAttempt({
        webhookDeliveries: repos.webhookDeliveries,
        post: (url, body, headers) => postWebhook(url, body, headers, { allowPrivate: config.webhookAllowPrivate }),
        metrics,
      }),
      startGroup: (groupId, ids, retryAt) => temporal.startWebhookGroup(groupId, ids, retryAt),
      listen: (c, fn) => sql.listen(c, fn),
      channel: WEBHOOK_QUEUE_CHANNEL,
      concurrency: config.webhookConcurrency,
      logger,
    }),
  };
}
