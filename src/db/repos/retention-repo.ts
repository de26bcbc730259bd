import type { Sql } from '../sql.js';
import { createInboundBlobsRepo } from './inbound-blobs-repo.js';
import { noPendingDelivery, removeInbound } from './inbound-removal.js';

/**
 * The statements of retention (services/retention-service.ts): each removes at most `limit` of the oldest
 * rows past a cutoff and answers how many, so a caller repeats it, statement by statement, each a short
 * transaction of its own. Cutoffs are ids: they are time-ordered (ids.ts), so each batch is a range scan of
 * an index from its start, and rows locked by someone else are skipped (the next run takes them), so a
 * batch never waits on, nor holds up, a delivery. Nothing a delivery, retry or scheduled send still needs is
 * touched: pending emails, enqueued scheduled emails, pending webhook deliveries and their events.
 */
export function createRetentionRepo(sql: Sql) {
  const count = async (rows: Promise<{ n: number; m?: number }[]>) => {
    const [row] = await rows;
    return { rows: row?.n ?? 0, attachments: row?.m ?? 0 };
  };
  return {
    /** Drops the html, text, headers and attachments of emails older than `before` (an email id) that are no longer pending. */
    expireEmailContent: (before: string, limit: number) =>
      count(sql<{ n: number; m: number }[]>`
        with batch as (
          select id from emails where content_expired_at is null and id < ${before} and status <> 'pending'
          order by id limit ${limit} for update skip locked),
        dropped as (delete from attachments where owner_id in (select id from batch) returning 1),
        cleared as (
          update emails set html = '', text_body = '', headers = '{}', content_expired_at = now()
          where id in (select id from batch) returning 1)
        select (select count(*) from cleared)::int as n, (select count(*) from dropped)::int as m`),

    /** The same for scheduled emails sent or cancelled before `before` (a scheduled id): their drafts are read no more. */
    expireScheduledContent: (before: string, limit: number) =>
      count(sql<{ n: number; m: number }[]>`
        with batch as (
          select id from scheduled_emails where content_expired_at is null and status <> 'enqueued' and id < ${before}
          order by id limit ${limit} for update skip locked),
        dropped as (delete from attachments where owner_id in (select id from batch) returning 1),
        cleared as (
          update scheduled_emails set draft = draft || '{"html": "", "text": "", "headers": {}}'::jsonb, content_expired_at = now()
          where id in (select id from batch) returning 1)
        select (select count(*) from cleared)::int as n, (select count(*) from dropped)::int as m`),

    /**
     * Deletes finished webhook deliveries (succeeded or discarded) with their attempts, older than `before` (a
     * delivery id: it starts with its event's time). `m` is the attempts.
     */
    deleteWebhookDeliveries: (before: string, limit: number) =>
      count(sql<{ n: number; m: number }[]>`
        with batch as (
          select id from webhook_deliveries where id < ${before} and status <> 'pending'
          order by id limit ${limit} for update skip locked),
        attempts as (delete from webhook_attempts where delivery_id in (select id from batch) returning 1),
        gone as (delete from webhook_deliveries where id in (select id from batch) returning 1)
        select (select count(*) from gone)::int as n, (select count(*) from attempts)::int as m`),

    /** Deletes events older than `before` (an event id) that no webhook delivery still refers to (a pending one keeps its event). */
    deleteEvents: (before: string, limit: number) =>
      count(sql<{ n: number }[]>`
        with batch as (
          select id from events e where id < ${before}
            and not exists (select 1 from webhook_deliveries d where d.event_id = e.id)
          order by id limit ${limit} for update skip locked),
        gone as (delete from events where id in (select id from batch) returning 1)
        select count(*)::int as n from gone`),

    /**
     * Deletes the per-key daily counts (api_key_quota_usage) of days before `beforeDay` (YYYY-MM-DD): only a day's
     * own count is ever read (the reservation and the list's sent_today), so past days hold nothing. The account's
     * quota_usage is its sending history (the management API's daily stats read it) and stays.
     */
    deleteKeyQuotaUsage: (beforeDay: string, limit: number) =>
      count(sql<{ n: number }[]>`
        with gone as (
          delete from api_key_quota_usage where ctid = any(array(
            select ctid from api_key_quota_usage where day < ${beforeDay}::date limit ${limit} for update skip locked))
          returning 1)
        select count(*)::int as n from gone`),

    /** Deletes the repeat windows of opens and clicks of emails older than `before` (an email id); the counts stay. */
    deleteTrackingWindows: (before: string, limit: number) =>
      count(sql<{ n: number }[]>`
        with gone as (
          delete from tracking_windows where ctid = any(array(
            select ctid from tracking_windows where email_id < ${before} order by email_id limit ${limit} for update skip locked))
          returning 1)
        select count(*)::int as n from gone`),

    /**
     * Deletes inbound emails received before `before` (an inbound id) whole: the row, its stored bytes, its
     * `inbound` event with that event's finished deliveries (inbound-removal.ts). One with a delivery still
     * pending waits for the next run.
     */
    async deleteInboundEmails(before: string, limit: number) {
      const r = await removeInbound(
        sql,
        sql`select id from inbound_emails i where id < ${before} and ${noPendingDelivery(sql)} order by id limit ${limit}`,
      );
      return { ...r, rows: r.inboundEmails };
    },

    /**
     * Deletes stored bytes no inbound email names, written before `before` (a crash between their write and their
     * row's commit leaves them: inbound-blobs-repo.ts deleteOrphanBlobs).
     */
    deleteOrphanInboundBlobs: (before: Date, limit: number) =>
      createInboundBlobsRepo(sql).deleteOrphanBlobs(before, limit),

    /** Deletes caught messages older than `before` (a caught id); answers the files they were kept in. */
    async deleteCaughtMessages(before: string, limit: number): Promise<{ rows: number; paths: string[] }> {
      const rows = await sql<{ path: string }[]>`
        delete from caught_messages where id in (
          select id from caught_messages where id < ${before} order by id limit ${limit} for update skip locked)
        returning path`;
      return { rows: rows.length, paths: rows.map((r) => r.path).filter((p) => p !== '') };
    },
  };
}
export type RetentionRepo = ReturnType<typeof createRetentionRepo>;
