import type { Mailboxes } from '../../domain/email-draft.js';
import type { JsonValue } from '../../domain/json.js';
import { mentionsAddress, redactAddresses, redactJson, redactMailboxes, redactText } from '../../domain/erasure.js';
import { jsonb, type Sql, type Tx } from '../sql.js';
import { removeInbound } from './inbound-removal.js';
import type { ErasureCounts, ScannedChunk } from '../../domain/entities/erasure.js';

export const noErasure = (): ErasureCounts => ({
  emails: 0,
  scheduledEmails: 0,
  attachments: 0,
  events: 0,
  webhookAttempts: 0,
  trackingWindows: 0,
  caughtMessages: 0,
  suppressions: 0,
  idempotencyKeys: 0,
  skippedPending: 0,
  inboundEmails: 0,
});

type EmailAddressRow = {
  id: string;
  status: string;
  header_message_id: string;
  mailboxes: Mailboxes;
  from_address: string;
  to_addresses: string[];
  cc_addresses: string[];
  bcc_addresses: string[];
  reply_to: string[];
  remaining_recipients: string[] | null;
  smtp_response: string | null;
  last_error: string | null;
};

/**
 * The statements of erasure (services/erasure-service.ts) on emails: one email's content, and an address's
 * every mention in the emails (and their events, webhook attempts, tracking windows and caught copies) it
 * appears in. Rows are rewritten, not deleted, so an erased email still answers GET /emails/{id} in the
 * API's shape. Each call is one short transaction over a bounded set of emails.
 */
export function createErasureRepo(sql: Sql) {
  return {
    ...createInboundErasureRepo(sql),

    /** Drops one email's subject, bodies, headers, tags and attachments (and its scheduled draft's); refuses a pending email. */
    async eraseEmail(emailId: string): Promise<'not_found' | 'pending' | { counts: ErasureCounts; paths: string[] }> {
      return sql.begin(async (tx) => {
        const [email] = await tx<{ status: string; header_message_id: string; job_type: string; job_id: string }[]>`
          select status, header_message_id, job_type, job_id from emails where id = ${emailId} for update`;
        if (!email) return 'not_found' as const;
        if (email.status === 'pending') return 'pending' as const;
        const scheduledId = email.job_type === 'scheduled' ? email.job_id : '';
        const [r] = await tx<{ scheduled: number; attachments: number; windows: number; paths: string[] }[]>`
          with cleared as (
            update emails set subject = '', html = '', text_body = '', headers = '{}', tags = '{}', content_expired_at = now()
            where id = ${emailId} returning 1),
          drafts as (
            update scheduled_emails set subject = '', content_expired_at = now(),
              draft = draft || '{"subject": "", "html": "", "text": "", "headers": {}, "tags": {}}'::jsonb
            where id = ${scheduledId} returning 1),
          dropped as (delete from attachments where owner_id in (${emailId}, ${scheduledId}) returning 1),
          windows as (delete from tracking_windows where email_id = ${emailId} returning 1),
          caught as (delete from caught_messages where message_id = ${email.header_message_id} returning path)
          select (select count(*) from drafts)::int as scheduled, (select count(*) from dropped)::int as attachments,
            (select count(*) from windows)::int as windows, array(select path from caught) as paths`;
        const counts = {
          ...noErasure(),
          emails: 1,
          scheduledEmails: r!.scheduled,
          attachments: r!.attachments,
          trackingWindows: r!.windows,
          caughtMessages: r!.paths.length,
        };
        return { counts, paths: r!.paths.filter((p) => p !== '') };
      }) as Promise<'not_found' | 'pending' | { counts: ErasureCounts; paths: string[] }>;
    },

    /** The next `limit` emails after `after` (of one account, or all) in id order; hits: those the address (`key`, lower case) is in. */
    async scanEmails(key: string, accountId: string | undefined, after: string, limit: number): Promise<ScannedChunk> {
      const [r] = await sql<{ last: string | null; hits: string[] }[]>`
        with scanned as (
          select id, from_address, to_addresses, cc_addresses, bcc_addresses, reply_to from emails
          where id > ${after} ${accountId === undefined ? sql`` : sql`and account_id = ${accountId}`}
          order by ${accountId === undefined ? sql`id` : sql`account_id, id`} limit ${limit})
        select (select max(id) from scanned) as last, array(
          select id from scanned
          where exists (select 1 from unnest(array[from_address] || to_addresses || cc_addresses || bcc_addresses || reply_to) a where lower(a) = ${key})
          order by id) as hits`;
      return { last: r?.last ?? undefined, hits: r?.hits ?? [] };
    },

    /**
     * Replaces the address (and its display name) in the emails `ids`, drops their content (it was written to
     * the address), and redacts it from their events and webhook attempts; their tracking windows and caught
     * copies go. Pending emails are left as they are and counted.
     */
    async redactEmails(ids: string[], address: string): Promise<{ counts: ErasureCounts; paths: string[] }> {
      return sql.begin(async (tx) => {
        const rows = await tx<EmailAddressRow[]>`
          select id, status, header_message_id, mailboxes, from_address, to_addresses, cc_addresses, bcc_addresses, reply_to,
            remaining_recipients, smtp_response, last_error
          from emails where id = any(${ids}) order by id for update`;
        const done = rows.filter((r) => r.status !== 'pending');
        const counts = { ...noErasure(), emails: done.length, skippedPending: rows.length - done.length };
        if (done.length === 0) return { counts, paths: [] };
        const doneIds = done.map((r) => r.id);
        await tx`
          update emails e set mailboxes = r.mailboxes, from_address = r.from_address, to_addresses = r.to_addresses,
            cc_addresses = r.cc_addresses, bcc_addresses = r.bcc_addresses, reply_to = r.reply_to, remaining_recipients = r.remaining_recipients,
            smtp_response = r.smtp_response, last_error = r.last_error,
            subject = '', html = '', text_body = '', headers = '{}', tags = '{}', content_expired_at = now()
          from jsonb_to_recordset(${jsonb(
            tx,
            done.map((r) => redactedEmail(r, address)),
          )}) as r(
            id text, mailboxes jsonb, from_address text, to_addresses text[], cc_addresses text[], bcc_addresses text[], reply_to text[],
            remaining_recipients text[], smtp_response text, last_error text)
          where e.id = r.id`;
        const [gone] = await tx<{ attachments: number; windows: number; paths: string[] }[]>`
          with dropped as (delete from attachments where owner_id = any(${doneIds}) returning 1),
          windows as (delete from tracking_windows where email_id = any(${doneIds}) returning 1),
          caught as (delete from caught_messages where message_id = any(${done.map((r) => r.header_message_id)}) returning path)
          select (select count(*) from dropped)::int as attachments, (select count(*) from windows)::int as windows, array(select path from caught) as paths`;
        counts.attachments = gone!.attachments;
        counts.trackingWindows = gone!.windows;
        counts.caughtMessages = gone!.paths.length;
        counts.events = await redactEvents(tx, doneIds, address);
        counts.webhookAttempts = await redactAttempts(tx, doneIds, address);
        return { counts, paths: gone!.paths.filter((p) => p !== '') };
      }) as Promise<{ counts: ErasureCounts; paths: string[] }>;
    },
  };
}
export type ErasureRepo = ReturnType<typeof createErasureRepo>;

/**
 * Inbound mail of an address: the next `limit` inbound emails after `after` (of one account, or all) in id order;
 * hits: those the address (`key`, lower case) sent (From, the envelope sender) or was sent to (To, Cc, Reply-To,
 * the envelope recipient). A message a person sent or received is theirs through and through, so it is deleted,
 * not rewritten (inbound-removal.ts), and the `reply` events it made on the account's emails lose the address.
 */
function createInboundErasureRepo(sql: Sql) {
  return {
    async scanInbound(key: string, accountId: string | undefined, after: string, limit: number): Promise<ScannedChunk> {
      const [r] = await sql<{ last: string | null; hits: string[] }[]>`
        with scanned as (
          select id, from_address, envelope_from, envelope_to, to_addresses, cc_addresses, reply_to_addresses
          from inbound_emails
          where id > ${after} ${accountId === undefined ? sql`` : sql`and account_id = ${accountId}`}
          order by id limit ${limit})
        select (select max(id) from scanned) as last, array(
          select id from scanned
          where exists (
            select 1 from jsonb_array_elements_text(
              to_addresses || cc_addresses || reply_to_addresses || jsonb_build_array(from_address, envelope_from, envelope_to)) a
            where lower(a) = ${key})
          order by id) as hits`;
      return { last: r?.last ?? undefined, hits: r?.hits ?? [] };
    },

    /** Deletes the inbound emails `ids` (those with a pending webhook delivery are skipped) and redacts their replies. */
    async deleteInbound(ids: string[], address: string): Promise<ErasureCounts> {
      return sql.begin(async (tx) => {
        const replies = await tx<{ id: string; data: JsonValue }[]>`
          select e.id, e.data from events e
          where e.email_id in (select reply_to_email_id from inbound_emails where id = any(${ids}) and reply_to_email_id is not null)
            and e.type = 'reply' and e.data->>'inbound_id' = any(${ids})
          for update of e`;
        const r = await removeInbound(tx, tx`select id from inbound_emails where id = any(${ids})`);
        const redacted = replies
          .filter((e) => mentionsAddress(e.data, address))
          .map((e) => ({ id: e.id, data: redactJson(e.data, address) }));
        if (redacted.length > 0)
          await tx`
            update events e set data = r.data from jsonb_to_recordset(${jsonb(tx, redacted)}) as r(id text, data jsonb)
            where e.id = r.id`;
        return {
          ...noErasure(),
          inboundEmails: r.inboundEmails,
          events: r.events + redacted.length,
          webhookAttempts: r.webhookAttempts,
          skippedPending: r.skipped,
        };
      }) as Promise<ErasureCounts>;
    },
  };
}

function redactedEmail(r: EmailAddressRow, address: string) {
  const text = (s: string | null) => (s === null ? null : redactText(s, address));
  return {
    id: r.id,
    mailboxes: redactMailboxes(r.mailboxes, address),
    from_address: redactAddresses([r.from_address], address)[0],
    to_addresses: redactAddresses(r.to_addresses, address),
    cc_addresses: redactAddresses(r.cc_addresses, address),
    bcc_addresses: redactAddresses(r.bcc_addresses, address),
    reply_to: redactAddresses(r.reply_to, address),
    remaining_recipients: r.remaining_recipients === null ? null : redactAddresses(r.remaining_recipients, address),
    smtp_response: text(r.smtp_response),
    last_error: text(r.last_error),
  };
}

/** The events of the emails whose data mentions the address, rewritten without it; answers how many. */
async function redactEvents(tx: Tx, emailIds: string[], address: string): Promise<number> {
  const events = await tx<{ id: string; data: JsonValue }[]>`
    select id, data from events where email_id = any(${emailIds}) and strpos(lower(data::text), ${address.toLowerCase()}) > 0 for update`;
  const changed = events
    .filter((e) => mentionsAddress(e.data, address))
    .map((e) => ({ id: e.id, data: redactJson(e.data, address) }));
  if (changed.length === 0) return 0;
  await tx`
    update events e set data = r.data from jsonb_to_recordset(${jsonb(tx, changed)}) as r(id text, data jsonb) where e.id = r.id`;
  return changed.length;
}

/** The webhook attempts (response excerpts, errors) of the emails' events that mention the address, rewritten without it. */
async function redactAttempts(tx: Tx, emailIds: string[], address: string): Promise<number> {
  const key = address.toLowerCase();
  const attempts = await tx<{ delivery_id: string; attempt: number; response_excerpt: string; error: string }[]>`
    select a.delivery_id, a.attempt, a.response_excerpt, a.error
    from events e join webhook_deliveries d on d.event_id = e.id join webhook_attempts a on a.delivery_id = d.id
    where e.email_id = any(${emailIds}) and (strpos(lower(a.response_excerpt), ${key}) > 0 or strpos(lower(a.error), ${key}) > 0)
    for update of a`;
  if (attempts.length === 0) return 0;
  const rows = attempts.map((a) => ({
    ...a,
    response_excerpt: redactText(a.response_excerpt, address),
    error: redactText(a.error, address),
  }));
  await tx`
    update webhook_attempts w set response_excerpt = r.response_excerpt, error = r.error
    from jsonb_to_recordset(${jsonb(tx, rows)}) as r(delivery_id text, attempt int, response_excerpt text, error text)
    where w.delivery_id = r.delivery_id and w.attempt = r.attempt`;
  return attempts.length;
}
