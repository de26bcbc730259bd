import type postgres from 'postgres';
import type { EventType } from '../../domain/catalog.js';
import type { Sql } from '../sql.js';
import { type EmailRaw, type EmailRow, toEmail } from './emails-repo.js';
import { createGroupQueue } from './group-queue.js';

export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'discarded';

export interface WebhookAttemptRow {
  attempt: number;
  startedAt: Date;
  statusCode: number;
  latencyMs: number;
  responseExcerpt: string;
  error: string;
}

export interface WebhookDeliveryRow {
  id: string;
  webhookId: string;
  eventId: string;
  eventType: EventType;
  emailId: string;
  status: WebhookDeliveryStatus;
  createdAt: Date;
  completedAt: Date | null;
  attempts: WebhookAttemptRow[];
}

/** Everything one attempt needs: where, with which secret, and the event with its email. */
export interface DeliveryToSend {
  id: string;
  status: WebhookDeliveryStatus;
  /** Undefined once the webhook was deleted. */
  webhook: { url: string; secret: string } | undefined;
  event: { id: string; type: EventType; at: Date; data: Record<string, unknown> };
  email: EmailRow;
}

export const WEBHOOK_QUEUE_CHANNEL = 'mailer_webhook_queue';

type DeliveryRaw = {
  id: string; webhook_id: string; event_id: string; type: EventType; email_id: string; status: WebhookDeliveryStatus;
  created_at: Date; completed_at: Date | null; attempts: { attempt: number; started_at: string; status_code: number; latency_ms: number; response_excerpt: string; error: string }[];
};

const toDelivery = (r: DeliveryRaw): WebhookDeliveryRow => ({
  id: r.id, webhookId: r.webhook_id, eventId: r.event_id, eventType: r.type, emailId: r.email_id, status: r.status,
  createdAt: r.created_at, completedAt: r.completed_at,
  attempts: r.attempts.map((a) => ({
    attempt: a.attempt, startedAt: new Date(a.started_at), statusCode: a.status_code, latencyMs: a.latency_ms,
    responseExcerpt: a.response_excerpt, error: a.error,
  })),
});

/**
 * Webhook deliveries: one row per (event, webhook), queued by the fan-out trigger of `events`, claimed in
 * groups by the dispatcher like the email outbox, and finished by the webhook activity. Each attempt is a row
 * of its own, so an operator sees every status code, latency and error.
 */
export function createWebhookDeliveriesRepo(sql: Sql) {
  const selectDeliveries = (where: postgres.PendingQuery<postgres.Row[]>, limit: number) => sql<DeliveryRaw[]>`
    select d.id, d.webhook_id, d.event_id, e.type, e.email_id, d.status, d.created_at, d.completed_at,
      coalesce((select json_agg(json_build_object('attempt', a.attempt, 'started_at', a.started_at, 'status_code', a.status_code,
        'latency_ms', a.latency_ms, 'response_excerpt', a.response_excerpt, 'error', a.error) order by a.attempt)
        from webhook_attempts a where a.delivery_id = d.id), '[]') as attempts
    from webhook_deliveries d join events e on e.id = d.event_id
    where ${where}
    order by d.id desc limit ${limit}`;

  return {
    ...createGroupQueue(sql, { table: 'webhook_deliveries', id: 'id', order: 'created_at', waiting: sql`status = 'pending'` }),

    async loadForSending(id: string): Promise<DeliveryToSend | undefined> {
      const [row] = await sql<({ d_id: string; d_status: WebhookDeliveryStatus; url: string | null; secret: string | null; e_id: string; e_type: EventType; e_at: Date; e_data: Record<string, unknown> } & EmailRaw)[]>`
        select d.id as d_id, d.status as d_status,
          case when w.deleted_at is null then w.url end as url, case when w.deleted_at is null then w.secret end as secret,
          e.id as e_id, e.type as e_type, e.created_at as e_at, e.data as e_data, m.*
        from webhook_deliveries d
        join webhooks w on w.id = d.webhook_id
        join events e on e.id = d.event_id
        join emails m on m.id = e.email_id
        where d.id = ${id}`;
      if (!row) return undefined;
      return {
        id: row.d_id,
        status: row.d_status,
        webhook: row.url !== null && row.secret !== null ? { url: row.url, secret: row.secret } : undefined,
        event: { id: row.e_id, type: row.e_type, at: row.e_at, data: row.e_data },
        email: toEmail(row),
      };
    },

    /** Counts an attempt of a pending delivery; answers its number (undefined: no longer pending). */
    async beginAttempt(id: string): Promise<number | undefined> {
      const [row] = await sql<{ attempt_count: number }[]>`
        update webhook_deliveries set attempt_count = attempt_count + 1 where id = ${id} and status = 'pending' returning attempt_count`;
      return row?.attempt_count;
    },

    /** Records one attempt; a 2xx answer finishes the delivery in the same statement. */
    async recordAttempt(id: string, a: WebhookAttemptRow, succeeded: boolean): Promise<void> {
      await sql`
        with attempt as (
          insert into webhook_attempts (delivery_id, attempt, started_at, status_code, latency_ms, response_excerpt, error)
          values (${id}, ${a.attempt}, ${a.startedAt}, ${a.statusCode}, ${a.latencyMs}, ${a.responseExcerpt}, ${a.error})
          on conflict (delivery_id, attempt) do nothing)
        update webhook_deliveries set status = 'succeeded', completed_at = now()
        where id = ${id} and ${succeeded} and status = 'pending'`;
    },

    /** The retry budget is spent (or the webhook is gone): the event is discarded for this webhook. */
    async discard(id: string): Promise<void> {
      await sql`update webhook_deliveries set status = 'discarded', completed_at = now() where id = ${id} and status = 'pending'`;
    },

    /** Queues a delivery again with a fresh retry budget (its attempts so far are kept). */
    async requeue(id: string): Promise<boolean> {
      const rows = await sql`
        update webhook_deliveries set status = 'pending', group_id = null, claimed_at = null, completed_at = null
        where id = ${id} and status <> 'pending' returning id`;
      if (rows.length > 0) await sql`select pg_notify(${WEBHOOK_QUEUE_CHANNEL}, '')`;
      return rows.length > 0;
    },

    async get(id: string): Promise<WebhookDeliveryRow | undefined> {
      const [row] = await selectDeliveries(sql`d.id = ${id}`, 1);
      return row && toDelivery(row);
    },

    async listForWebhook(webhookId: string, status: WebhookDeliveryStatus | undefined, limit: number): Promise<WebhookDeliveryRow[]> {
      const where = status ? sql`d.webhook_id = ${webhookId} and d.status = ${status}` : sql`d.webhook_id = ${webhookId}`;
      return (await selectDeliveries(where, limit)).map(toDelivery);
    },
  };
}
export type WebhookDeliveriesRepo = ReturnType<typeof createWebhookDeliveriesRepo>;
