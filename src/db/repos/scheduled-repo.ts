import type { ScheduledStatus } from '../../domain/catalog.js';
import type { Mailbox } from '../../domain/address.js';
import type { ValidDraft } from '../../domain/email-draft.js';
import type { Sql } from '../sql.js';
import { ownedRows } from './owned-rows.js';
import { upcomingScheduled } from './scheduled-upcoming.js';
import { waitingScheduled } from './scheduled-window.js';
import { attachmentRows, emailRow, idempotencyCte } from './emails-repo.js';
import type { IdempotencyCompletion, StoredDraft } from '../../domain/entities/emails.js';
import type { ScheduledRow, CancelOutcome } from '../../domain/entities/scheduled.js';

type Raw = {
  id: string;
  account_id: string;
  from: Mailbox;
  to: Mailbox[];
  subject: string;
  scheduled_at: Date;
  status: ScheduledStatus;
  attempts: number;
  email_id: string | null;
  created_at: Date;
};
const COLUMNS = `id, account_id, draft->'from' as from, draft->'to' as to, subject, scheduled_at, status, attempts, email_id, created_at`;
const toScheduled = (r: Raw): ScheduledRow => ({
  id: r.id,
  accountId: r.account_id,
  from: r.from,
  to: r.to,
  subject: r.subject,
  scheduledAt: r.scheduled_at,
  status: r.status,
  attempts: r.attempts,
  emailId: r.email_id,
  createdAt: r.created_at,
});

/**
 * How many bytes of drafts one firing reads at most (always at least one draft): the drafts come to this
 * process to be made into email rows and go back in the firing statement, and one may be 10 MB.
 */
const FIRE_BYTES = 64 * 1024 * 1024;

type DueRaw = {
  id: string;
  account_id: string;
  api_key_id: string | null;
  draft: StoredDraft;
  attachment_count: number;
};

/**
 * Each due email becomes `sent` and its email is created (with its attachments, job_type scheduled, the
 * Message-ID fixed) and put in the delivery queue, all in one statement. Only rows still `enqueued` change
 * and only their emails are written, so a cancellation (or a concurrent firing) that got there first wins,
 * atomically. The rows are built by emailRow, like every other email's. `newEmailId` names the email of a
 * scheduled email (by its id); answers the ids of the emails created.
 */
async function fireDue(
  sql: Sql,
  q: {
    from: Date;
    to: Date;
    newEmailId: (scheduledId: string) => string;
    limit: number;
    onLateness?: (seconds: number[]) => void;
  },
): Promise<string[]> {
  const due = await sql<DueRaw[]>`
    select d.id, d.account_id, d.api_key_id, d.draft, (select count(*) from attachments a where a.owner_id = d.id)::int as attachment_count
    from (${waitingScheduled(sql, { from: q.from, to: q.to, limit: q.limit, dueOnly: true })}) d
    where d.bytes_before < ${FIRE_BYTES}
    order by d.scheduled_at, d.id`;
  if (due.length === 0) return [];
  const rows = due.map((d) =>
    emailRow({
      id: q.newEmailId(d.id),
      accountId: d.account_id,
      apiKeyId: d.api_key_id,
      jobType: 'scheduled',
      jobId: d.id,
      draft: d.draft,
      attachmentCount: d.attachment_count,
    }),
  );
  // The column names are emailRow's own keys, not input.
  const columns = sql.unsafe(Object.keys(rows[0]!).join(', '));
  const [row] = await sql<{ ids: string[]; lateness: number[] }[]>`
    with fired as (
      update scheduled_emails s set status = 'sent', sent_at = now(), attempts = attempts + 1, email_id = p.email_id
      from unnest(${due.map((d) => d.id)}::text[], ${rows.map((r) => r.id)}::text[]) as p(sch_id, email_id)
      where s.id = p.sch_id and s.status = 'enqueued'
      returning s.id, p.email_id, extract(epoch from now() - s.scheduled_at)::float8 as lateness),
    email as (
      insert into emails (${columns})
      select ${columns} from jsonb_populate_recordset(null::emails, ${sql.json(rows as never)}) r
      where r.id in (select email_id from fired)
      returning id),
    files as (
      insert into attachments (owner_id, position, filename, content_type, content, content_id)
      select f.email_id, a.position, a.filename, a.content_type, a.content, a.content_id from attachments a join fired f on a.owner_id = f.id),
    queued as (insert into delivery_queue (email_id) select id from email)
    select (select coalesce(array_agg(id), '{}') from email) as ids, (select coalesce(array_agg(lateness), '{}') from fired) as lateness`;
  q.onLateness?.(row!.lateness);
  return row!.ids;
}

export function createScheduledRepo(sql: Sql) {
  return {
    /** Stores a scheduled email, its attachments and the Idempotency-Key's answer in one statement. */
    async create(s: {
      id: string;
      accountId: string;
      apiKeyId: string;
      draft: ValidDraft;
      scheduledAt: Date;
      idempotency?: IdempotencyCompletion;
    }): Promise<void> {
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

    ...ownedRows<Raw, ScheduledRow, ScheduledStatus>(sql, 'scheduled_emails', 'scheduled', COLUMNS, toScheduled),

    /** Cancels a waiting scheduled email; the row's state decides a race with the firing, atomically. */
    async cancel(accountId: string, id: string): Promise<CancelOutcome> {
      const changed = await sql`
        update scheduled_emails set status = 'cancelled', cancelled_at = now()
        where id = ${id} and account_id = ${accountId} and status = 'enqueued' returning id`;
      if (changed.length > 0) return 'cancelled';
      // Not waiting any more: a status never goes back to enqueued, so this read cannot be stale.
      const [row] = await sql<
        { status: ScheduledStatus }[]
      >`select status from scheduled_emails where id = ${id} and account_id = ${accountId}`;
      if (!row) return 'not_found';
      return row.status === 'cancelled' ? 'already_cancelled' : 'already_sent';
    },

    /**
     * Fires the waiting scheduled emails of [from, to) whose time has come (scheduled_at <= now), a bounded
     * number at a time; answers how many fired (0: none is due), and tells `onLateness` how many seconds
     * after its time each one fired.
     */
    fireDue: (
      from: Date,
      to: Date,
      newEmailId: (scheduledId: string) => string,
      opts: { limit?: number; onLateness?: (seconds: number[]) => void } = {},
    ): Promise<string[]> =>
      fireDue(sql, { from, to, newEmailId, limit: opts.limit ?? 500, onLateness: opts.onLateness }),

    /** The scheduled emails due in [from, to) as the emails firing will make of them, to build their messages ahead (scheduled-upcoming.ts). */
    upcoming: (from: Date, to: Date, newEmailId: () => string, opts: { limit: number; maxBytes: number }) =>
      upcomingScheduled(sql, { from, to, newEmailId, ...opts }),

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
