import type { Sql } from '../sql.js';
import { type EmailRaw, type EmailRow, type StoredAttachment, toEmail } from './emails-repo.js';

/**
 * The delivery side of emails: the outbox the dispatcher drains into workflows, and the leases by which
 * one delivery attempt at a time owns an email. A lease outlives a killed worker by at most its duration;
 * the retry then takes the email over.
 */

export interface ClaimedGroup {
  groupId: string;
  emailIds: string[];
}

export interface DeliveryOutcome {
  id: string;
  messageId: string;
  response: string;
}

export function createDeliveriesRepo(sql: Sql) {
  return {
    /** Takes up to `limit` unclaimed queue entries for a new group; concurrent dispatchers skip each other's. */
    async claimGroup(groupId: string, limit: number): Promise<string[]> {
      const rows = await sql<{ email_id: string }[]>`
        update delivery_queue q set group_id = ${groupId}, claimed_at = now()
        from (
          select email_id from delivery_queue where group_id is null
          order by enqueued_at limit ${limit} for update skip locked
        ) c
        where q.email_id = c.email_id
        returning q.email_id`;
      return rows.map((r) => r.email_id).sort();
    },

    /** Groups claimed long ago whose workflow may never have started (a dispatcher died in between). */
    async staleGroups(olderThanSeconds: number): Promise<ClaimedGroup[]> {
      const rows = await sql<{ group_id: string; ids: string[] }[]>`
        select group_id, array_agg(email_id order by email_id) as ids from delivery_queue
        where group_id is not null and claimed_at < now() - make_interval(secs => ${olderThanSeconds})
        group by group_id limit 100`;
      return rows.map((r) => ({ groupId: r.group_id, emailIds: r.ids }));
    },

    /** Gives a group's emails back to the queue (its workflow could not be started). */
    async unclaimGroup(groupId: string): Promise<void> {
      await sql`update delivery_queue set group_id = null, claimed_at = null where group_id = ${groupId}`;
    },

    async touchGroup(groupId: string): Promise<void> {
      await sql`update delivery_queue set claimed_at = now() where group_id = ${groupId}`;
    },

    async dequeue(emailIds: string[]): Promise<void> {
      if (emailIds.length > 0) await sql`delete from delivery_queue where email_id = any(${emailIds})`;
    },

    /**
     * Leases the still-pending emails among `ids` to `token`. Answers those leased now and those another
     * live attempt still holds (with when its lease ends).
     */
    async lease(ids: string[], token: string, seconds: number): Promise<{ leased: string[]; busyUntil: Date | null }> {
      const leased = await sql<{ id: string }[]>`
        update emails set lease_token = ${token}, lease_until = now() + make_interval(secs => ${seconds}), attempts = attempts + 1
        where id = any(${ids}) and status = 'pending' and (lease_until is null or lease_until < now())
        returning id`;
      const [busy] = await sql<{ until: Date | null }[]>`
        select max(lease_until) as until from emails
        where id = any(${ids}) and status = 'pending' and lease_token <> ${token} and lease_until >= now()`;
      return { leased: leased.map((r) => r.id), busyUntil: busy?.until ?? null };
    },

    async renewLeases(token: string, seconds: number): Promise<void> {
      await sql`update emails set lease_until = now() + make_interval(secs => ${seconds}) where lease_token = ${token} and status = 'pending'`;
    },

    /** Several emails with their attachments, in two queries (ids not found are absent). */
    async loadMany(ids: string[]): Promise<Map<string, { email: EmailRow; attachments: StoredAttachment[] }>> {
      const rows = await sql<EmailRaw[]>`select * from emails where id = any(${ids})`;
      const withFiles = rows.filter((r) => r.attachment_count > 0).map((r) => r.id);
      const files = withFiles.length > 0
        ? await sql<{ owner_id: string; filename: string; content_type: string; content: Buffer }[]>`
            select owner_id, filename, content_type, content from attachments where owner_id = any(${withFiles}) order by owner_id, position`
        : [];
      const out = new Map<string, { email: EmailRow; attachments: StoredAttachment[] }>();
      for (const r of rows) out.set(r.id, { email: toEmail(r), attachments: [] });
      for (const f of files) out.get(f.owner_id)?.attachments.push({ filename: f.filename, contentType: f.content_type, content: f.content });
      return out;
    },

    /**
     * Records acceptance by the mail server; only the lease holder may (a stale attempt changes nothing).
     * A batch email moves its job's counter in the same statement, so counters are exact and never go back.
     */
    async markSent(token: string, outcome: DeliveryOutcome): Promise<boolean> {
      const [row] = await sql<{ n: number }[]>`
        with sent as (
          update emails set status = 'sent', message_id = ${outcome.messageId}, smtp_response = ${outcome.response},
            sent_at = now(), lease_token = null, lease_until = null, last_error = null
          where id = ${outcome.id} and lease_token = ${token} and status = 'pending'
          returning job_type, job_id),
        counted as (
          update batch_jobs b set sent_count = sent_count + 1 from sent
          where sent.job_type = 'batch' and b.id = sent.job_id returning 1)
        select (select count(*) from sent)::int as n`;
      return row!.n > 0;
    },

    /** A permanent refusal: the email ends `bounced` (a batch counts it failed). */
    async markBounced(token: string, id: string, error: string): Promise<boolean> {
      const [row] = await sql<{ n: number }[]>`
        with bounced as (
          update emails set status = 'bounced', last_error = ${error}, lease_token = null, lease_until = null
          where id = ${id} and lease_token = ${token} and status = 'pending'
          returning job_type, job_id),
        counted as (
          update batch_jobs b set failed_count = failed_count + 1 from bounced
          where bounced.job_type = 'batch' and b.id = bounced.job_id returning 1)
        select (select count(*) from bounced)::int as n`;
      return row!.n > 0;
    },

    /** A temporary failure: the email stays pending and free for the next attempt. */
    async release(token: string, id: string, error: string): Promise<void> {
      await sql`
        update emails set last_error = ${error}, lease_token = null, lease_until = null
        where id = ${id} and lease_token = ${token} and status = 'pending'`;
    },

  };
}
export type DeliveriesRepo = ReturnType<typeof createDeliveriesRepo>;
