import type { ScheduledStatus } from '../../domain/catalog.js';
import type { ValidDraft } from '../../domain/email-draft.js';
import type { Sql } from '../sql.js';
import { attachmentRows, idempotencyCte, type IdempotencyCompletion } from './emails-repo.js';

export interface ScheduledRow {
  id: string;
  accountId: string;
  from: string;
  to: string[];
  subject: string;
  scheduledAt: Date;
  status: ScheduledStatus;
  attempts: number;
  emailId: string | null;
  createdAt: Date;
}

type Raw = {
  id: string; account_id: string; from_address: string; to_addresses: string[]; subject: string; scheduled_at: Date;
  status: ScheduledStatus; attempts: number; email_id: string | null; created_at: Date;
};
const COLUMNS = 'id, account_id, from_address, to_addresses, subject, scheduled_at, status, attempts, email_id, created_at';
const toScheduled = (r: Raw): ScheduledRow => ({
  id: r.id, accountId: r.account_id, from: r.from_address, to: r.to_addresses, subject: r.subject, scheduledAt: r.scheduled_at,
  status: r.status, attempts: r.attempts, emailId: r.email_id, createdAt: r.created_at,
});

/** The stored draft of a scheduled email: the validated request without attachments (kept apart). */
type StoredDraft = Omit<ValidDraft, 'attachments' | 'sender'> & { senderDomain: string };

export type CancelOutcome = 'cancelled' | 'already_cancelled' | 'already_sent' | 'not_found';

export function createScheduledRepo(sql: Sql) {
  return {
    /** Stores a scheduled email, its attachments and the Idempotency-Key's answer in one statement. */
    async create(s: { id: string; accountId: string; apiKeyId: string; draft: ValidDraft; scheduledAt: Date; idempotency?: IdempotencyCompletion }): Promise<void> {
      const { attachments, sender, ...rest } = s.draft;
      const stored: StoredDraft = { ...rest, senderDomain: sender.domain };
      const files = attachmentRows([{ id: s.id, draft: { attachments } }]);
      const idem = s.idempotency;
      // Each `name as (insert into ... ${helper}` stays on one line: see emails-repo's note on helpers.
      await sql`
        with created as (insert into scheduled_emails (id, account_id, api_key_id, draft, from_address, to_addresses, subject, scheduled_at)
          values (${s.id}, ${s.accountId}, ${s.apiKeyId}, ${sql.json(stored as never)}, ${s.draft.from}, ${s.draft.to}, ${s.draft.subject}, ${s.scheduledAt})
          returning id)
        ${files.length > 0 ? sql`, files as (insert into attachments ${sql(files as never)})` : sql``}
        ${idempotencyCte(sql, idem)}
        select id from created`;
    },

    async markWorkflowStarted(id: string): Promise<void> {
      await sql`update scheduled_emails set workflow_started = true where id = ${id}`;
    },

    /** Scheduled emails whose workflow may never have started (the process died after the commit). */
    async unstarted(olderThanSeconds: number, limit: number): Promise<{ id: string; scheduledAt: Date }[]> {
      const rows = await sql<{ id: string; scheduled_at: Date }[]>`
        select id, scheduled_at from scheduled_emails
        where not workflow_started and status = 'enqueued' and created_at < now() - make_interval(secs => ${olderThanSeconds})
        order by created_at limit ${limit}`;
      return rows.map((r) => ({ id: r.id, scheduledAt: r.scheduled_at }));
    },

    async get(accountId: string, id: string): Promise<ScheduledRow | undefined> {
      const [row] = await sql<Raw[]>`select ${sql.unsafe(COLUMNS)} from scheduled_emails where id = ${id} and account_id = ${accountId}`;
      return row && toScheduled(row);
    },

    async list(accountId: string, status: ScheduledStatus | undefined, limit: number, offset: number): Promise<{ rows: ScheduledRow[]; total: number }> {
      const where = sql`account_id = ${accountId} ${status ? sql`and status = ${status}` : sql``}`;
      const [rows, [count]] = await Promise.all([
        sql<Raw[]>`select ${sql.unsafe(COLUMNS)} from scheduled_emails where ${where} order by id desc limit ${limit} offset ${offset}`,
        sql<{ n: number }[]>`select count(*)::int as n from scheduled_emails where ${where}`,
      ]);
      return { rows: rows.map(toScheduled), total: count!.n };
    },

    /** Cancels a waiting scheduled email; the row's state decides a race with the firing, atomically. */
    async cancel(accountId: string, id: string): Promise<CancelOutcome> {
      const changed = await sql`
        update scheduled_emails set status = 'cancelled', cancelled_at = now()
        where id = ${id} and account_id = ${accountId} and status = 'enqueued' returning id`;
      if (changed.length > 0) return 'cancelled';
      // Not waiting any more: a status never goes back to enqueued, so this read cannot be stale.
      const [row] = await sql<{ status: ScheduledStatus }[]>`select status from scheduled_emails where id = ${id} and account_id = ${accountId}`;
      if (!row) return 'not_found';
      return row.status === 'cancelled' ? 'already_cancelled' : 'already_sent';
    },

    /**
     * Fires a scheduled email: if it is still waiting, it becomes `sent` and its email is created (with
     * its attachments, job_type scheduled) and put in the delivery queue, all in the same statement. Answers the email id, or undefined when
     * it was cancelled (or fired already: a retried activity finds the email it made).
     */
    async fire(id: string, emailId: string, headerMessageId: (domain: string) => string): Promise<{ emailId: string; fresh: boolean } | undefined> {
      const [current] = await sql<{ status: ScheduledStatus; email_id: string | null; sender_domain: string }[]>`
        select status, email_id, draft->>'senderDomain' as sender_domain from scheduled_emails where id = ${id}`;
      if (!current || current.status === 'cancelled') return undefined;
      if (current.status === 'sent') return current.email_id ? { emailId: current.email_id, fresh: false } : undefined;
      const [row] = await sql<{ email_id: string }[]>`
        with fired as (
          update scheduled_emails set status = 'sent', sent_at = now(), attempts = attempts + 1, email_id = ${emailId}
          where id = ${id} and status = 'enqueued'
          returning id, account_id, api_key_id, draft),
        email as (
          insert into emails (id, account_id, api_key_id, job_type, job_id, from_address, to_addresses, cc_addresses,
            bcc_addresses, reply_to, subject, html, text_body, headers, tags, attachment_count, size_bytes, header_message_id)
          select ${emailId}, account_id, api_key_id, 'scheduled', id, draft->>'from',
            array(select jsonb_array_elements_text(draft->'to')), array(select jsonb_array_elements_text(draft->'cc')),
            array(select jsonb_array_elements_text(draft->'bcc')), array(select jsonb_array_elements_text(draft->'replyTo')),
            draft->>'subject', draft->>'html', draft->>'text', draft->'headers', draft->'tags',
            (select count(*) from attachments where owner_id = ${id}), (draft->>'size')::int, ${headerMessageId(current.sender_domain)}
          from fired
          returning id),
        files as (
          insert into attachments (owner_id, position, filename, content_type, content)
          select ${emailId}, position, filename, content_type, content from attachments, email where owner_id = ${id}),
        queued as (insert into delivery_queue (email_id) select id from email)
        select id as email_id from email`;
      if (row) return { emailId: row.email_id, fresh: true };
      // Cancelled (or fired) in between: the row's state decided.
      return this.fire(id, emailId, headerMessageId);
    },

    async scheduledAt(id: string): Promise<Date | undefined> {
      const [row] = await sql<{ scheduled_at: Date }[]>`select scheduled_at from scheduled_emails where id = ${id}`;
      return row?.scheduled_at;
    },
  };
}
export type ScheduledRepo = ReturnType<typeof createScheduledRepo>;
