import type postgres from 'postgres';
import type { EventType } from '../../domain/catalog.js';
import { sealedContext, type SecretBox } from '../../domain/sealed-values.js';
import type { Sql } from '../sql.js';
import type { EmailRaw } from '../../domain/entities/emails.js';
import { toEmail } from './emails-repo.js';
import { eventData, inboundBodiesJoin, inboundBodyColumns, type InboundBodiesRaw } from './inbound-event-bodies.js';
import { createGroupQueue } from './group-queue.js';
import type {
  WebhookDeliveryStatus,
  DiscardReason,
  DisableThreshold,
  WebhookAttemptRow,
  WebhookDeliveryRow,
  DeliveryToSend,
} from '../../domain/entities/webhooks.js';

export const WEBHOOK_QUEUE_CHANNEL = 'mailer_webhook_queue';

type DeliveryRaw = {
  id: string;
  webhook_id: string;
  event_id: string;
  type: EventType;
  email_id: string | null;
  inbound_id: string | null;
  status: WebhookDeliveryStatus;
  created_at: Date;
  completed_at: Date | null;
  discard_reason: DiscardReason | null;
  attempts: {
    attempt: number;
    started_at: string;
    status_code: number;
    latency_ms: number;
    response_excerpt: string;
    error: string;
  }[];
};

const toDelivery = (r: DeliveryRaw): WebhookDeliveryRow => ({
  id: r.id,
  webhookId: r.webhook_id,
  eventId: r.event_id,
  eventType: r.type,
  emailId: r.email_id,
  inboundId: r.inbound_id,
  status: r.status,
  createdAt: r.created_at,
  completedAt: r.completed_at,
  discardReason: r.discard_reason,
  attempts: r.attempts.map((a) => ({
    attempt: a.attempt,
    startedAt: new Date(a.started_at),
    statusCode: a.status_code,
    latencyMs: a.latency_ms,
    responseExcerpt: a.response_excerpt,
    error: a.error,
  })),
});

type SendingRaw = {
  d_id: string;
  d_status: WebhookDeliveryStatus;
  d_attempt: number;
  w_id: string;
  url: string | null;
  secret: string | null;
  previous: string | null;
  disabled: boolean;
  e_id: string;
  e_type: EventType;
  e_at: Date;
  e_data: Record<string, unknown>;
  e_inbound: string | null;
} & InboundBodiesRaw &
  (EmailRaw | { [K in keyof EmailRaw]: null });

/**
 * Deliveries (rows of `source`: id, status, webhook_id, event_id, attempt_count) with what sending needs. The
 * email is a left join: an `inbound` event is about no email (email_id NULL, inbound_id set), its columns null.
 */
const selectForSending = (sql: Sql, source: postgres.PendingQuery<postgres.Row[]>) => sql<SendingRaw[]>`
  select d.id as d_id, d.status as d_status, d.attempt_count as d_attempt, w.id as w_id,
    case when w.deleted_at is null then w.url end as url, case when w.deleted_at is null then w.secret end as secret,
    case when w.previous_secret_until > now() then w.previous_secret end as previous, w.disabled_at is not null as disabled,
    e.id as e_id, e.type as e_type, e.created_at as e_at, e.data as e_data, e.inbound_id as e_inbound,
    ${inboundBodyColumns(sql)}, m.*
  from ${source} d
  join webhooks w on w.id = d.webhook_id
  join events e on e.id = d.event_id
  ${inboundBodiesJoin(sql)}
  left join emails m on m.id = e.email_id`;

/**
 * The row, its webhook's secrets opened when the attempt signs (they are stored sealed for their webhook:
 * webhooks-repo.ts): one that fails to open fails that attempt alone, not the claim of its whole group.
 */
const toSending = (row: SendingRaw, box: SecretBox): DeliveryToSend => {
  const { secret, previous } = row;
  const open = (sealed: string) => box.open(sealed, sealedContext.webhookSecret(row.w_id));
  return {
    id: row.d_id,
    status: row.d_status,
    attempt: row.d_attempt,
    webhook:
      row.url !== null && secret !== null
        ? {
            id: row.w_id,
            url: row.url,
            disabled: row.disabled,
            get secrets() {
              return previous !== null ? [open(secret), open(previous)] : [open(secret)];
            },
          }
        : undefined,
    event: { id: row.e_id, type: row.e_type, at: row.e_at, data: eventData(row.e_data, row), inboundId: row.e_inbound },
    email: row.id === null ? undefined : toEmail(row),
  };
};

/** A delivery with what sending it needs: the webhook's URL and signing secrets, the event, its email. */
async function loadForSending(sql: Sql, box: SecretBox, id: string): Promise<DeliveryToSend | undefined> {
  const [row] = await selectForSending(sql, sql`(select * from webhook_deliveries where id = ${id})`);
  return row && toSending(row, box);
}

/**
 * Claims up to `limit` queued deliveries for a group (like claimGroup) and, in the same statement, counts
 * an attempt of each whose webhook can take one (not disabled nor deleted) and loads what sending needs:
 * a round of first attempts costs one statement, then one per delivery to record its outcome.
 */
async function claimForSending(sql: Sql, box: SecretBox, groupId: string, limit: number): Promise<DeliveryToSend[]> {
  const rows = await sql<SendingRaw[]>`
    with c as (
      update webhook_deliveries t set group_id = ${groupId}, claimed_at = now(), attempt_count = t.attempt_count
        + (select count(*)::int from webhooks w where w.id = t.webhook_id and w.deleted_at is null and w.disabled_at is null)
      from (
        select id from webhook_deliveries where group_id is null and status = 'pending'
        order by created_at limit ${limit} for update skip locked
      ) x
      where t.id = x.id
      returning t.id, t.status, t.webhook_id, t.event_id, t.attempt_count)
    ${selectForSending(sql, sql`c`)}
    order by d.id`;
  return rows.map((row) => toSending(row, box));
}

async function discard(
  sql: Sql,
  id: string,
  reason: DiscardReason,
  threshold?: DisableThreshold,
): Promise<{ disabledWebhook?: { id: string; reason: string } }> {
  const counts = reason === 'retries_exhausted' && threshold !== undefined;
  const discards = threshold?.discards ?? 0;
  const hours = threshold?.hours ?? 0;
  // Computed from the row being updated (not a snapshot) so that parallel discards all count.
  const trips = sql`${discards > 0} and w.disabled_at is null and w.consecutive_discards + 1 >= ${discards}
    and coalesce(w.failing_since, now()) <= now() - make_interval(hours => ${hours})`;
  const [row] = await sql<{ id: string; reason: string; just_disabled: boolean }[]>`
    with d as (
      update webhook_deliveries set status = 'discarded', completed_at = now(), discard_reason = ${reason}
      where id = ${id} and status = 'pending' returning webhook_id)
    update webhooks w set consecutive_discards = w.consecutive_discards + 1, failing_since = coalesce(w.failing_since, now()),
      disabled_at = case when ${trips} then now() else w.disabled_at end,
      disabled_reason = case when ${trips}
        then format('%s deliveries in a row discarded (every attempt failed) since %s', w.consecutive_discards + 1,
          to_char(coalesce(w.failing_since, now()) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
        else w.disabled_reason end
    from d where w.id = d.webhook_id and ${counts}
    returning w.id, w.disabled_reason as reason, w.disabled_at = now() as just_disabled`;
  return row?.just_disabled ? { disabledWebhook: { id: row.id, reason: row.reason } } : {};
}

/** Deliveries matching `where`, newest first, each with its attempts. */
const deliveriesWhere = (sql: Sql, where: postgres.PendingQuery<postgres.Row[]>, limit: number) => sql<DeliveryRaw[]>`
  select d.id, d.webhook_id, d.event_id, e.type, e.email_id, e.inbound_id, d.status, d.created_at, d.completed_at, d.discard_reason,
    coalesce((select json_agg(json_build_object('attempt', a.attempt, 'started_at', a.started_at, 'status_code', a.status_code,
      'latency_ms', a.latency_ms, 'response_excerpt', a.response_excerpt, 'error', a.error) order by a.attempt)
      from webhook_attempts a where a.delivery_id = d.id), '[]') as attempts
  from webhook_deliveries d join events e on e.id = d.event_id
  where ${where}
  order by d.id desc limit ${limit}`;

/**
 * Webhook deliveries: one row per (event, webhook), queued by the fan-out trigger of `events`, claimed in
 * groups by the dispatcher like the email outbox, and finished by the webhook activity. Each attempt is a row
 * of its own, so an operator sees every status code, latency and error.
 */
export function createWebhookDeliveriesRepo(sql: Sql, box: SecretBox) {
  const selectDeliveries = (where: postgres.PendingQuery<postgres.Row[]>, limit: number) =>
    deliveriesWhere(sql, where, limit);

  /** The one way a delivery is queued again (single and bulk re-send): a fresh retry budget, then a wake-up. */
  const requeueWhere = async (where: postgres.PendingQuery<postgres.Row[]>): Promise<number> => {
    const rows = await sql`
      update webhook_deliveries set status = 'pending', group_id = null, claimed_at = null, completed_at = null, discard_reason = null
      where ${where} returning id`;
    if (rows.length > 0) await sql`select pg_notify(${WEBHOOK_QUEUE_CHANNEL}, '')`;
    return rows.length;
  };

  return {
    ...createGroupQueue(sql, {
      table: 'webhook_deliveries',
      id: 'id',
      order: 'created_at',
      waiting: sql`status = 'pending'`,
    }),

    loadForSending: (id: string) => loadForSending(sql, box, id),

    claimForSending: (groupId: string, limit: number) => claimForSending(sql, box, groupId, limit),

    /** Moves deliveries to another group (their retries' workflow), claimed now. */
    async regroup(groupId: string, ids: string[]): Promise<void> {
      await sql`update webhook_deliveries set group_id = ${groupId}, claimed_at = now() where id = any(${ids}) and status = 'pending'`;
    },

    /** Counts an attempt of a pending delivery; answers its number (undefined: no longer pending). */
    async beginAttempt(id: string): Promise<number | undefined> {
      const [row] = await sql<{ attempt_count: number }[]>`
        update webhook_deliveries set attempt_count = attempt_count + 1 where id = ${id} and status = 'pending' returning attempt_count`;
      return row?.attempt_count;
    },

    /**
     * Records one attempt; a 2xx answer finishes the delivery in the same statement and ends the webhook's
     * run of failures (written only when there is one, so that a busy webhook's row is not rewritten per event).
     */
    async recordAttempt(id: string, a: WebhookAttemptRow, succeeded: boolean): Promise<void> {
      await sql`
        with attempt as (
          insert into webhook_attempts (delivery_id, attempt, started_at, status_code, latency_ms, response_excerpt, error)
          values (${id}, ${a.attempt}, ${a.startedAt}, ${a.statusCode}, ${a.latencyMs}, ${a.responseExcerpt}, ${a.error})
          on conflict (delivery_id, attempt) do nothing),
        done as (
          update webhook_deliveries set status = 'succeeded', completed_at = now()
          where id = ${id} and ${succeeded} and status = 'pending' returning webhook_id)
        update webhooks set consecutive_discards = 0, failing_since = null
        from done where webhooks.id = done.webhook_id and (consecutive_discards <> 0 or failing_since is not null)`;
    },

    /**
     * Discards a pending delivery with its reason. Only `retries_exhausted` counts towards the threshold:
     * the answer says whether this discard disabled the webhook, and why.
     */
    discard: (id: string, reason: DiscardReason, threshold?: DisableThreshold) => discard(sql, id, reason, threshold),

    /** Queues a delivery again with a fresh retry budget (its attempts so far are kept). */
    async requeue(id: string): Promise<boolean> {
      return (await requeueWhere(sql`id = ${id} and status <> 'pending'`)) > 0;
    },

    /**
     * Bulk re-send: queues again, oldest first, at most `limit` deliveries of a webhook discarded whose
     * event came in [from, to); `more` says whether others in the range are left for a next call.
     */
    async requeueDiscarded(
      webhookId: string,
      range: { from: Date; to: Date },
      limit: number,
    ): Promise<{ queued: number; more: boolean }> {
      const inRange = sql`webhook_id = ${webhookId} and status = 'discarded' and created_at >= ${range.from} and created_at < ${range.to}`;
      const queued = await requeueWhere(
        sql`id in (select id from webhook_deliveries where ${inRange} order by created_at, id limit ${limit})`,
      );
      const [left] = await sql<
        { more: boolean }[]
      >`select exists (select 1 from webhook_deliveries where ${inRange}) as more`;
      return { queued, more: left!.more };
    },

    /** The delivery, if it is `owner`'s (any account's when undefined: the operator). */
    async get(id: string, owner?: string): Promise<WebhookDeliveryRow | undefined> {
      const [row] = await selectDeliveries(
        owner === undefined ? sql`d.id = ${id}` : sql`d.id = ${id} and d.account_id = ${owner}`,
        1,
      );
      return row && toDelivery(row);
    },

    async listForWebhook(
      webhookId: string,
      status: WebhookDeliveryStatus | undefined,
      limit: number,
    ): Promise<WebhookDeliveryRow[]> {
      const where = status
        ? sql`d.webhook_id = ${webhookId} and d.status = ${status}`
        : sql`d.webhook_id = ${webhookId}`;
      return (await selectDeliveries(where, limit)).map(toDelivery);
    },
  };
}
export type WebhookDeliveriesRepo = ReturnType<typeof createWebhookDeliveriesRepo>;
