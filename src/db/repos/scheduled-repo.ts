import type { ScheduledStatus } from '../../domain/catalog.js';
import type { Mailbox } from '../../domain/address.js';
import type { ValidDraft } from '../../domain/email-draft.js';
import type { Sql } from '../sql.js';
import { attachmentRows, idempotencyCte, type IdempotencyCompletion } from './emails-repo.js';

export interface ScheduledRow {
  id: string;
  accountId: string;
  from: Mailbox;
  to: Mailbox[];
  subject: string;
  scheduledAt: Date;
  status: ScheduledStatus;
  attempts: number;
  emailId: string | null;
  createdAt: Date;
}

type Raw = {
  id: string; account_id: string; from: Mailbox; to: Mailbox[]; subject: string; scheduled_at: Date;
  status: ScheduledStatus; attempts: number; email_id: string | null; created_at: Date;
};
const COLUMNS = `id, account_id, draft->'from' as from, draft->'to' as to, subject, scheduled_at, status, attempts, email_id, created_at`;
const toScheduled = (r: Raw): ScheduledRow => ({
  id: r.id, accountId: r.account_id, from: r.from, to: r.to, subject: r.subject, scheduledAt: r.scheduled_at,
  status: r.status, attempts: r.attempts, emailId: r.email_id, createdAt: r.created_at,
});

/** The stored draft of a scheduled email: the validated request, mailboxes parsed, without attachments (kept apart). */
type StoredDraft = Omit<ValidDraft, 'attachments'>;

export type CancelOutcome = 'cancelled' | 'already_cancelled' | 'already_sent' | 'not_found';

export function createScheduledRepo(sql: Sql) {
  return {
    /** Stores a scheduled email, its attachments and the Idempotency-Key's answer in one statement. */
    async create(s: { id: string; accountId: string; apiKeyId: string; draft: ValidDraft; scheduledAt: Date; idempotency?: IdempotencyCompletion }): Promise<void> {
      const { attachments, ...rest } = s.draft;
      const stored: StoredDraft = rest;
      const files = attachmentRows([{ id: s.id, draft: { attachments } }]);
      const idem = s.idempotency;
      // Each `name as (insert into ... ${helper}` stays on one line: see emails-repo's note on helpers.
      await sql`
        with created as (insert into scheduled_emails (id, account_id, api_key_id, draft, from_address, to_addresses, subject, scheduled_at)
          values (${s.id}, ${s.accountId}, ${s.apiKeyId}, ${sql.json(stored as never)}, ${s.draft.from.address}, ${s.draft.to.map((m) => m.address)}, ${s.draft.subject}, ${s.scheduledAt})
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
     * Fires the waiting scheduled emails of [from, to) whose time has come (scheduled_at <= now): each
     * becomes `sent`, and its email is created (with its attachments, job_type scheduled, the Message-ID
     * fixed) and put in the delivery queue, all in one statement. Only `enqueued` rows change, so a
     * cancellation that got there first wins, atomically. Answers how many fired.
     */
    async fireDue(from: Date, to: Date, newEmailId: () => string, limit = 500): Promise<number> {
      const due = await sql<{ id: string }[]>`
        select id from scheduled_emails
        where status = 'enqueued' and scheduled_at >= ${from} and scheduled_at < ${to} and scheduled_at <= now()
        order by scheduled_at limit ${limit}`;
      if (due.length === 0) return 0;
      const schIds = due.map((r) => r.id);
      const emailIds = schIds.map(() => newEmailId());
      const [row] = await sql<{ n: number }[]>`
        with pairs as (select * from unnest(${schIds}::text[], ${emailIds}::text[]) as p(sch_id, email_id)),
        fired as (
          update scheduled_emails s set status = 'sent', sent_at = now(), attempts = attempts + 1, email_id = p.email_id
          from pairs p where s.id = p.sch_id and s.status = 'enqueued'
          returning s.id, s.account_id, s.api_key_id, s.draft, p.email_id),
        email as (
          insert into emails (id, account_id, api_key_id, job_type, job_id, mailboxes, sender_domain, from_address, to_addresses,
            cc_addresses, bcc_addresses, reply_to, subject, html, text_body, headers, tags, attachment_count, size_bytes, header_message_id)
          select f.email_id, f.account_id, f.api_key_id, 'scheduled', f.id,
            jsonb_build_object('from', f.draft->'from', 'to', f.draft->'to', 'cc', f.draft->'cc', 'bcc', f.draft->'bcc', 'replyTo', f.draft->'replyTo'),
            f.draft->>'senderDomain', f.draft->'from'->>'address',
            array(select m->>'address' from jsonb_array_elements(f.draft->'to') with ordinality t(m, i) order by i),
            array(select m->>'address' from jsonb_array_elements(f.draft->'cc') with ordinality t(m, i) order by i),
            array(select m->>'address' from jsonb_array_elements(f.draft->'bcc') with ordinality t(m, i) order by i),
            array(select m->>'address' from jsonb_array_elements(f.draft->'replyTo') with ordinality t(m, i) order by i),
            f.draft->>'subject', f.draft->>'html', f.draft->>'text', f.draft->'headers', f.draft->'tags',
            (select count(*) from attachments a where a.owner_id = f.id)::int, (f.draft->>'size')::int,
            '<' || f.email_id || '@' || (f.draft->>'senderDomain') || '>'
          from fired f
          returning id),
        files as (
          insert into attachments (owner_id, position, filename, content_type, content)
          select f.email_id, a.position, a.filename, a.content_type, a.content from attachments a join fired f on a.owner_id = f.id),
        queued as (insert into delivery_queue (email_id) select id from email)
        select (select count(*) from email)::int as n`;
      return row!.n;
    },

    /** When the next waiting scheduled email of [from, to) is due, if any. */
    async nextDue(from: Date, to: Date): Promise<Date | undefined> {
      const [row] = await sql<{ at: Date | null }[]>`
        select min(scheduled_at) as at from scheduled_emails
        where status = 'enqueued' and scheduled_at >= ${from} and scheduled_at < ${to}`;
      return row?.at ?? undefined;
    },

  };
}
export type ScheduledRepo = ReturnType<typeof createScheduledRepo>;
