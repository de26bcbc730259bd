import type { Sql } from '../sql.js';
import type { AccountStatus } from '../../domain/catalog.js';
import type { AttachmentRaw, EmailRaw } from '../../domain/entities/emails.js';
import { toAttachment, toEmail } from './emails-repo.js';
import { recordOutcomes } from './delivery-outcomes.js';
import type { LeasedOutcome } from '../../domain/entities/delivery.js';
import { deliveryQueueStats } from './delivery-queue-stats.js';
import { createEmailLeases } from './email-leases.js';
import { createGroupQueue } from './group-queue.js';
import type { AnsweredCopy, LoadedEmail, AnsweredProgress } from '../../domain/entities/delivery.js';

/**
 * The delivery side of emails: the outbox the dispatcher drains into workflows, the leases by which one
 * delivery attempt at a time owns an email (email-leases.ts), loading the leased emails, and recording
 * their outcomes (delivery-outcomes.ts).
 *
 * The statements here name their emails by primary key (`id = any(...)`, also where they join on id) and
 * test `status is not distinct from 'pending'` (the same as `= 'pending'`: status is NOT NULL) because no
 * index can serve that test. Statistics taken while few emails were pending, or while the table was young,
 * made the planner scan every pending email through the status index (PostgreSQL 18 skips its leading
 * account_id), or the whole table, rather than look up a few ids: under a backlog each outcome statement
 * read thousands of rows (docs/benchmark.md, "Figures behind the code's choices").
 */
export function createEmailDeliveriesRepo(sql: Sql) {
  return {
    ...createGroupQueue(sql, { table: 'delivery_queue', id: 'email_id', order: 'enqueued_at', waiting: sql`true` }),

    /** The delivery queue at a glance, for /metrics (delivery-queue-stats.ts). */
    queueStats: (timeoutMs: number) => deliveryQueueStats(sql, timeoutMs),

    async dequeue(emailIds: string[]): Promise<void> {
      if (emailIds.length > 0) await sql`delete from delivery_queue where email_id = any(${emailIds})`;
    },

    ...createEmailLeases(sql),

    /** Several emails with their attachments and senders, in two queries (ids not found are absent). */
    async loadMany(ids: string[]): Promise<Map<string, LoadedEmail>> {
      if (ids.length === 0) return new Map();
      const rows = await sql<
        (EmailRaw & {
          account_status: AccountStatus;
          open_tracking: boolean | null;
          click_tracking: boolean | null;
          last_error: string | null;
          answered_recipients: AnsweredCopy[] | null;
        })[]
      >`
        select m.*, a.status as account_status, d.open_tracking, d.click_tracking
        from emails m
        join accounts a on a.id = m.account_id
        left join domains d on d.account_id = m.account_id and d.name = m.sender_domain
        where m.id = any(${ids})`;
      const withFiles = rows.filter((r) => r.attachment_count > 0).map((r) => r.id);
      const files =
        withFiles.length > 0
          ? await sql<(AttachmentRaw & { owner_id: string })[]>`
            select owner_id, filename, content_type, content, content_id from attachments where owner_id = any(${withFiles}) order by owner_id, position`
          : [];
      const out = new Map<string, LoadedEmail>();
      for (const r of rows) {
        const sender = {
          accountStatus: r.account_status,
          openTracking: r.open_tracking === true,
          clickTracking: r.click_tracking === true,
        };
        out.set(r.id, {
          email: toEmail(r),
          attachments: [],
          sender,
          lastError: r.last_error ?? '',
          answered: r.answered_recipients ?? [],
        });
      }
      for (const f of files) out.get(f.owner_id)?.attachments.push(toAttachment(f));
      return out;
    },

    /**
     * Records attempts' final outcomes with their events and suppressions, in one statement
     * (delivery-outcomes.ts); only the lease holder of each email may. Answers the account of each email
     * recorded, by outcomeKey(token, email id).
     */
    recordOutcomes: (entries: LeasedOutcome[]) => recordOutcomes(sql, entries),

    /**
     * Keeps the copies an attempt has handed over while its email's other copies are still being sent, one
     * statement for many emails, each only by the holder of its lease (a stale attempt changes nothing); the
     * email's outcome clears them. Duplicates of a crash are then one round trip's copies, not an email's.
     */
    async recordAnswered(entries: AnsweredProgress[]): Promise<void> {
      // One row per email: an UPDATE ... FROM applies one source row to each target row.
      const byEmail = new Map<string, AnsweredProgress>();
      for (const e of entries) {
        const key = `${e.token} ${e.emailId}`;
        const prior = byEmail.get(key);
        byEmail.set(key, prior ? { ...prior, copies: [...prior.copies, ...e.copies] } : e);
      }
      const rows = [...byEmail.values()].map((e) => ({ id: e.emailId, token: e.token, copies: e.copies }));
      await sql`
        update emails m set answered_recipients = coalesce(m.answered_recipients, '[]'::jsonb) || a.copies
        from jsonb_to_recordset(${sql.json(rows as never)}) as a(id text, token text, copies jsonb)
        where m.id = any(${rows.map((r) => r.id)}) and m.id = a.id and m.lease_token = a.token and m.status is not distinct from 'pending'`;
    },
  };
}
export type EmailDeliveriesRepo = ReturnType<typeof createEmailDeliveriesRepo>;
