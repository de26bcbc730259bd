import type { AccountsRepo } from '../db/index.js';
import type { DiscardReason, WebhookDeliveryRow, WebhookDeliveryStatus } from '../domain/entities/webhooks.js';
import type { WebhookDeliveriesRepo } from '../db/index.js';
import type { WebhookRow } from '../domain/entities/webhooks.js';
import type { WebhooksRepo } from '../db/index.js';
import { EVENT_TYPES, isOneOf } from '../domain/catalog.js';
import { toPage } from '../domain/pagination.js';
import { parseZonedTime } from '../domain/schedule.js';
import { invalid, notFound } from '../errors.js';
import { enumFilter } from './enum-filter.js';
import { newId } from '../ids.js';
import type { UrlCheck } from '../webhooks/address-guard.js';
import { generateWebhookSecret } from './secrets.js';

export const URL_MAX = 2048;
/**
 * Live webhooks an account may have: each event is sent to every one subscribed to it, so an account, which can now
 * make its own, must not turn one email into thousands of requests.
 */
export const WEBHOOKS_MAX = 50;
export const DELIVERY_STATUSES: readonly WebhookDeliveryStatus[] = ['pending', 'succeeded', 'discarded'];
export const DISCARD_REASONS: readonly DiscardReason[] = ['retries_exhausted', 'webhook_disabled', 'webhook_deleted'];
export const DELIVERIES_PAGE = { default: 50, max: 100 } as const;
/** How long a rotated-out secret keeps signing, by default and at most (seconds). */
export const SECRET_OVERLAP = { default: 86_400, max: 604_800 } as const;
/** Bulk re-send queues at most this many deliveries per call, so that one call is one bounded statement. */
export const BULK_RESEND_MAX = 1000;

export interface WebhooksDeps {
  webhooks: WebhooksRepo;
  webhookDeliveries: Pick<WebhookDeliveriesRepo, 'listForWebhook' | 'get' | 'requeue' | 'requeueDiscarded'>;
  accounts: Pick<AccountsRepo, 'get'>;
  checkUrl: (url: string) => Promise<UrlCheck>;
  /** Sends Verify's signed `test` request (event `test`) and answers the receiver's HTTP status (0: none). */
  sendTest: (webhook: WebhookRow) => Promise<{ statusCode: number }>;
}

/**
 * An account's webhooks and their deliveries, for both APIs: a key's calls name its own account (`owner`), and
 * another account's webhook or delivery is a 404 worded as an unknown one's, decided by the query that reads or
 * changes the row; the operator's calls pass no owner and reach any account's.
 */
export function createWebhooksService(deps: WebhooksDeps) {
  async function mustGet(owner: string | undefined, id: string): Promise<WebhookRow> {
    const webhook = await deps.webhooks.get(id, owner);
    if (!webhook) throw notFound('webhook', id);
    return webhook;
  }

  return {
    /** Creates a webhook; the answer is the only place the signing secret ever appears. */
    async create(accountId: string, input: { url: string; events: string[] }): Promise<WebhookRow> {
      if (!(await deps.accounts.get(accountId))) throw notFound('account', accountId);
      await assertValidWebhook(deps, input);
      const created = await deps.webhooks.create(
        {
          id: newId('webhook'),
          accountId,
          url: input.url,
          events: [...new Set(input.events)],
          secret: generateWebhookSecret(),
        },
        WEBHOOKS_MAX,
      );
      if (!created) throw invalid(`the account has ${WEBHOOKS_MAX} webhooks, the most it may have: delete one first`);
      return created;
    },

    /** One page of the account's webhooks, oldest first, with how many it has. */
    async list(
      accountId: string,
      q: { page: number; pageSize: number },
    ): Promise<{ rows: WebhookRow[]; total: number }> {
      const { limit, offset } = toPage(q.page, q.pageSize, 'page_size');
      if (!(await deps.accounts.get(accountId))) throw notFound('account', accountId);
      return deps.webhooks.page(accountId, limit, offset);
    },

    async delete(owner: string | undefined, id: string): Promise<void> {
      if (!(await deps.webhooks.softDelete(owner, id))) throw notFound('webhook', id);
    },

    /** Verify: the signed `test` request, answered at once; success means the receiver answered 2xx. */
    async verify(owner: string | undefined, id: string): Promise<{ success: boolean; statusCode: number }> {
      const { statusCode } = await deps.sendTest(await mustGet(owner, id));
      return { success: statusCode >= 200 && statusCode < 300, statusCode };
    },

    /** The events sent to a webhook, newest first, each with every attempt. */
    async deliveries(
      owner: string | undefined,
      id: string,
      q: { status: string; limit: number },
    ): Promise<WebhookDeliveryRow[]> {
      const webhook = await mustGet(owner, id);
      const status = enumFilter('status', DELIVERY_STATUSES, q.status);
      if (q.limit < 0 || q.limit > DELIVERIES_PAGE.max)
        throw invalid(`limit must be from 1 to ${DELIVERIES_PAGE.max}; got ${q.limit}`);
      return deps.webhookDeliveries.listForWebhook(webhook.id, status, q.limit || DELIVERIES_PAGE.default);
    },

    /** Sends an event to its webhook again with a fresh retry budget; one still being tried is left alone. */
    async resend(owner: string | undefined, deliveryId: string): Promise<WebhookDeliveryRow> {
      const delivery = await deps.webhookDeliveries.get(deliveryId, owner);
      if (!delivery) throw notFound('webhook delivery', deliveryId);
      // The delivery's webhook is of the delivery's account: no second check of the owner is needed.
      const webhook = await deps.webhooks.get(delivery.webhookId);
      if (!webhook) throw invalid(`webhook ${delivery.webhookId} was deleted; its events cannot be sent again`);
      refuseDisabled(webhook);
      if (delivery.status === 'pending') throw invalid(`webhook delivery ${deliveryId} is still being tried`);
      await deps.webhookDeliveries.requeue(delivery.id);
      // Answered as the re-send left it (queued again with a fresh budget), not read back: the worker may have
      // sent it already by then, and the caller would see `succeeded` for a request that only queued it.
      return { ...delivery, status: 'pending', completedAt: null, discardReason: null };
    },

    /**
     * Bulk re-send: the discarded deliveries whose events came in [from, to), oldest first, at most
     * BULK_RESEND_MAX per call, each queued as a single re-send would queue it.
     */
    async resendRange(
      owner: string | undefined,
      id: string,
      input: { from: string; to: string },
    ): Promise<{ queued: number; hasMore: boolean }> {
      const webhook = await mustGet(owner, id);
      refuseDisabled(webhook);
      const from = isoInstant('from', input.from);
      const to = input.to === '' ? new Date() : isoInstant('to', input.to);
      if (from >= to) throw invalid(`from (${input.from}) must be before to (${input.to || 'now'})`);
      const { queued, more } = await deps.webhookDeliveries.requeueDiscarded(webhook.id, { from, to }, BULK_RESEND_MAX);
      return { queued, hasMore: more };
    },

    /** A new secret, answered once; the current one keeps signing beside it for the overlap. */
    async rotateSecret(owner: string | undefined, id: string, overlapSeconds: number | undefined): Promise<WebhookRow> {
      const webhook = await deps.webhooks.rotateSecret(owner, id, generateWebhookSecret(), overlapOf(overlapSeconds));
      if (!webhook) throw notFound('webhook', id);
      return webhook;
    },

    /** Re-enables a disabled webhook (and is harmless on one that is not). */
    async enable(owner: string | undefined, id: string): Promise<WebhookRow> {
      const webhook = await deps.webhooks.enable(owner, id);
      if (!webhook) throw notFound('webhook', id);
      return webhook;
    },
  };
}
export type WebhooksService = ReturnType<typeof createWebhooksService>;

/** A new webhook's URL (length, scheme, a public address unless allowed) and its event types. */
async function assertValidWebhook(
  deps: Pick<WebhooksDeps, 'checkUrl'>,
  input: { url: string; events: string[] },
): Promise<void> {
  if (input.url === '') throw invalid('url is required');
  if (input.url.length > URL_MAX)
    throw invalid(`url: length ${input.url.length} exceeds the maximum of ${URL_MAX} characters`);
  const check = await deps.checkUrl(input.url);
  if (!check.ok) throw invalid(`url: ${check.reason}`);
  if (input.events.length === 0) throw invalid(`events is required: one or more of ${EVENT_TYPES.join(', ')}`);
  input.events.forEach((e, i) => {
    if (!isOneOf(EVENT_TYPES, e)) throw invalid(`events[${i}]: "${e}" is not one of ${EVENT_TYPES.join(', ')}`);
  });
}

/** A rotation's overlap in seconds: the default when not given, else within 0..SECRET_OVERLAP.max. */
function overlapOf(overlapSeconds: number | undefined): number {
  const overlap = overlapSeconds ?? SECRET_OVERLAP.default;
  if (!Number.isInteger(overlap) || overlap < 0 || overlap > SECRET_OVERLAP.max) {
    throw invalid(`overlap_seconds must be from 0 to ${SECRET_OVERLAP.max}; got ${overlap}`);
  }
  return overlap;
}

function refuseDisabled(webhook: WebhookRow): void {
  if (webhook.disabledAt)
    throw invalid(
      `webhook ${webhook.id} is disabled (${webhook.disabledReason ?? 'its deliveries kept failing'}); enable it first`,
    );
}

/** A time given as ISO 8601 with a zone (the rule of scheduled_at). */
function isoInstant(field: string, value: string): Date {
  const at = parseZonedTime(value);
  if (!at)
    throw invalid(
      `${field} must be an ISO 8601 time with a zone such as 2026-01-31T00:00:00Z; got "${value.slice(0, 60)}"`,
    );
  return at;
}
