import type { Sql } from '../sql.js';
import type { AccountStatus } from '../../domain/catalog.js';
import type { NewEvent, NewSuppression } from '../../domain/events.js';
import { type AttachmentRaw, type EmailRaw, type EmailRow, type StoredAttachment, toAttachment, toEmail } from './emails-repo.js';
import { recordOutcomes, type LeasedOutcome } from './delivery-outcomes.js';
import { createGroupQueue } from './group-queue.js';

/**
 * What an attempt made of an email: `delivered` (a server accepted it), `bounced` (refused, rejected or
 * suppressed), or still `pending` for the `remaining` recipients some server asked to try again later.
 */
export interface DeliveryOutcome {
  id: string;
  status: 'delivered' | 'bounced' | 'pending';
  remaining?: string[];
  messageId?: string;
  response?: string;
  sentAt?: Date;
  error?: string;
  events: NewEvent[];
  suppress: NewSuppression[];
}

/** The delivery queue's size: entries waiting for a workflow, entries claimed by one, the oldest's age (0 when empty). */
export interface QueueStats {
  waiting: number;
  claimed: number;
  oldestAgeSeconds: number;
}

/** Who sends an email, as delivery needs to know it: may the account still send, and does its domain track. */
export interface SenderState {
  accountStatus: AccountStatus;
  openTracking: boolean;
  clickTracking: boolean;
}

export interface LoadedEmail {
  email: EmailRow;
  attachments: StoredAttachment[];
  sender: SenderState;
  lastError: string;
}

/**
 * The delivery side of emails: the outbox the dispatcher drains into workflows, and the leases by which
 * one delivery attempt at a time owns an email. A lease outlives a killed worker by at most its duration;
 * the retry then takes the email over.
 *
 * The statements here name their emails by primary key (`id = any(...)`, also where they join on id) and
 * test `status is not distinct from 'pending'` (the same as `= 'pending'`: status is NOT NULL) because no
 * index can serve that test. Statistics taken while few emails were pending, or while the table was young,
 * made the planner scan every pending email through the status index (PostgreSQL 18 skips its leading
 * account_id), or the whole table, rather than look up a few ids: under a backlog each outcome statement
 * read thousands of rows (bench: 8,700 to 14,000 buffers for 4 or 5 emails, 35 to 50 ms).
 */
export function createEmailDeliveriesRepo(sql: Sql) {
  return {
    ...createGroupQueue(sql, { table: 'delivery_queue', id: 'email_id', order: 'enqueued_at', waiting: sql`true` }),

    /**
     * The delivery queue at a glance, for /metrics: entries waiting for a workflow, entries claimed by one
     * (their first attempt under way), and the age of the oldest. One statement over the narrow queue table;
     * cancelled (and rejected) past `timeoutMs`, so a scrape never waits on a slow or exhausted database.
     */
    async queueStats(timeoutMs: number): Promise<QueueStats> {
      const query = sql<{ waiting: number; claimed: number; oldest_age: number | null }[]>`
        select count(*) filter (where group_id is null)::int as waiting, count(*) filter (where group_id is not null)::int as claimed,
          extract(epoch from now() - min(enqueued_at))::float8 as oldest_age
        from delivery_queue`;
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => {
          query.cancel();
          reject(new Error(`the delivery queue statistics took over ${timeoutMs} ms`));
        }, timeoutMs);
      });
      try {
        const [row] = await Promise.race([query, timedOut]);
        return { waiting: row?.waiting ?? 0, claimed: row?.claimed ?? 0, oldestAgeSeconds: Math.max(0, row?.oldest_age ?? 0) };
      } finally {
        clearTimeout(timer);
      }
    },

    async dequeue(emailIds: string[]): Promise<void> {
      if (emailIds.length > 0) await sql`delete from delivery_queue where email_id = any(${emailIds})`;
    },

    /**
     * Leases the still-pending emails among `ids` to `token`. Answers those leased now and those another
     * live attempt still holds (with when its lease ends). One statement: the main query reads the rows as
     * they were before the update, so a pending email this update did not take although its lease had run out
     * there was leased by a concurrent attempt meanwhile: it counts as busy until now, and the caller looks
     * again (after its shortest wait) instead of taking it for settled.
     */
    async lease(ids: string[], token: string, seconds: number): Promise<{ leased: string[]; busyUntil: Date | null }> {
      const [row] = await sql<{ leased: string[]; until: Date | null }[]>`
        with taken as (
          update emails set lease_token = ${token}, lease_until = now() + make_interval(secs => ${seconds}), attempts = attempts + 1
          where id = any(${ids}) and status is not distinct from 'pending' and (lease_until is null or lease_until < now())
          returning id)
        select coalesce((select array_agg(id) from taken), '{}') as leased,
          (select max(greatest(coalesce(m.lease_until, now()), now())) from emails m
           where m.id = any(${ids}) and m.status is not distinct from 'pending' and m.lease_token is distinct from ${token}
             and m.id not in (select id from taken)) as until`;
      return { leased: row?.leased ?? [], busyUntil: row?.until ?? null };
    },

    /**
     * Extends to `seconds` from now the leases `token` holds among `ids` that have less than `belowSeconds`
     * left: a lease taken moments ago is not rewritten (each renewal is a new row version and an entry in
     * every index). By id, through the primary key: `lease_token` has no index (one would cost every lease
     * and outcome a write), so renewing by token alone scanned the whole table every few seconds per attempt
     * (measured under load: 106 ms a renewal, a tenth of the database's time).
     */
    async renewLeases(ids: string[], token: string, { seconds, belowSeconds }: { seconds: number; belowSeconds: number }): Promise<void> {
      await sql`
        update emails set lease_until = now() + make_interval(secs => ${seconds})
        where id = any(${ids}) and lease_token = ${token} and status is not distinct from 'pending'
          and lease_until < now() + make_interval(secs => ${belowSeconds})`;
    },

    /** Several emails with their attachments and senders, in two queries (ids not found are absent). */
    async loadMany(ids: string[]): Promise<Map<string, LoadedEmail>> {
      if (ids.length === 0) return new Map();
      const rows = await sql<(EmailRaw & { account_status: AccountStatus; open_tracking: boolean | null; click_tracking: boolean | null; last_error: string | null })[]>`
        select m.*, a.status as account_status, d.open_tracking, d.click_tracking
        from emails m
        join accounts a on a.id = m.account_id
        left join domains d on d.account_id = m.account_id and d.name = m.sender_domain
        where m.id = any(${ids})`;
      const withFiles = rows.filter((r) => r.attachment_count > 0).map((r) => r.id);
      const files = withFiles.length > 0
        ? await sql<(AttachmentRaw & { owner_id: string })[]>`
            select owner_id, filename, content_type, content, content_id from attachments where owner_id = any(${withFiles}) order by owner_id, position`
        : [];
      const out = new Map<string, LoadedEmail>();
      for (const r of rows) {
        const sender = { accountStatus: r.account_status, openTracking: r.open_tracking === true, clickTracking: r.click_tracking === true };
        out.set(r.id, { email: toEmail(r), attachments: [], sender, lastError: r.last_error ?? '' });
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

    /** A temporary failure: the email stays pending and free for the next attempt. */
    async release(token: string, id: string, error: string): Promise<void> {
      await sql`
        update emails set last_error = ${error}, lease_token = null, lease_until = null
        where id = ${id} and lease_token = ${token} and status = 'pending'`;
    },

  };
}
export type EmailDeliveriesRepo = ReturnType<typeof createEmailDeliveriesRepo>;
