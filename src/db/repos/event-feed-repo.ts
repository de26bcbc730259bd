import type { EventType } from '../../domain/catalog.js';
import type { Mailboxes } from '../../domain/email-draft.js';
import type { FeedPosition } from '../../domain/event-cursor.js';
import type { Sql } from '../sql.js';
import { eventData, inboundBodiesJoin, inboundBodyColumns, type InboundBodiesRaw } from './inbound-event-bodies.js';
import type { FeedEvent } from '../../domain/entities/events.js';

type Raw = {
  id: string;
  type: EventType;
  created_at: Date;
  data: Record<string, unknown>;
  tx: string;
} & Partial<InboundBodiesRaw> &
  (
    | { email_id: string; message_id: string; mailboxes: Mailboxes; subject: string; sent_at: Date | null }
    // An `inbound` event: about no email (CONTRACT.md "Inbound mail"), so its body has none.
    | { email_id: null; message_id: null; mailboxes: null; subject: null; sent_at: null }
  );

const toFeedEvent = (r: Raw): FeedEvent => ({
  id: r.id,
  type: r.type,
  at: r.created_at,
  data: eventData(r.data, r),
  position: { tx: r.tx, id: r.id },
  email:
    r.email_id === null
      ? undefined
      : {
          id: r.email_id,
          messageId: r.message_id,
          from: r.mailboxes.from,
          to: r.mailboxes.to,
          subject: r.subject,
          sentAt: r.sent_at,
        },
});

/**
 * An account's events in feed order (migration 0008): by writing transaction, then id, and only those whose
 * transaction is older than every one still open (`tx < xmin` of this statement's snapshot), so a later
 * read after the last position can never miss an event that committed late. The indexes (account_id, tx,
 * id) and (account_id, type, tx, id) answer each page with one range scan. The email is a left join: an
 * `inbound` event names an inbound email instead (email_id NULL) and is in the feed without one.
 */
export function createEventFeedRepo(sql: Sql) {
  return {
    async after(
      accountId: string,
      position: FeedPosition | undefined,
      type: EventType | undefined,
      limit: number,
      /** false: `inbound` events are left out (a key that may not read inbound mail). */
      withInbound = true,
      /** Only this email's events (GET /events?email_id=); the account's condition below still confines them. */
      emailId?: string,
    ): Promise<FeedEvent[]> {
      // One email's events are read by the index (email_id, id) and then ordered: a handful of rows. `offset 0`
      // keeps the planner from walking the account's whole feed in order instead, hoping to meet them early.
      const from =
        emailId === undefined ? sql`events` : sql`(select * from events where email_id = ${emailId} offset 0)`;
      const rows = await sql<Raw[]>`
        select e.id, e.type, e.created_at, e.data, e.tx::text as tx, ${inboundBodyColumns(sql)},
          m.id as email_id, m.message_id, m.mailboxes, m.subject, m.sent_at
        from ${from} e left join emails m on m.id = e.email_id
        ${inboundBodiesJoin(sql)}
        where e.account_id = ${accountId}
          ${type === undefined ? sql`` : sql`and e.type = ${type}`}
          ${withInbound ? sql`` : sql`and e.type <> 'inbound'`}
          ${position === undefined ? sql`` : sql`and (e.tx, e.id) > (${position.tx}::xid8, ${position.id})`}
          and e.tx < pg_snapshot_xmin(pg_current_snapshot())
        order by e.tx, e.id
        limit ${limit}`;
      return rows.map(toFeedEvent);
    },

    /**
     * One email's events, oldest first (as the operator's timeline orders them: recorded time, then id), or
     * undefined when the account has no such email. One statement: the email's row (by its primary key, and only
     * the account's) joined to its events (by the index (email_id, id)); an email without events yet is one row
     * whose event columns are null.
     */
    async ofEmail(accountId: string, emailId: string): Promise<FeedEvent[] | undefined> {
      const rows = await sql<(Omit<Raw, 'id'> & { id: string | null })[]>`
        select e.id, e.type, e.created_at, e.data, e.tx::text as tx,
          m.id as email_id, m.message_id, m.mailboxes, m.subject, m.sent_at
        from emails m left join events e on e.email_id = m.id
        where m.id = ${emailId} and m.account_id = ${accountId}
        order by e.created_at, e.id`;
      if (rows.length === 0) return undefined;
      return rows.filter((r): r is Raw => r.id !== null).map(toFeedEvent);
    },

    /** Whether the account has this email (another account's is as absent as one that never was). */
    async hasEmail(accountId: string, emailId: string): Promise<boolean> {
      const [row] = await sql`select 1 from emails where id = ${emailId} and account_id = ${accountId}`;
      return row !== undefined;
    },
  };
}
export type EventFeedRepo = ReturnType<typeof createEventFeedRepo>;
