import type { EmailStatus, Stream } from '../../domain/catalog.js';
import type { Mailbox } from '../../domain/address.js';
import type { Mailboxes, ValidDraft } from '../../domain/email-draft.js';
import { messageIdFor } from '../../domain/message-id.js';
import { activeTraceparent } from '../../telemetry/spans.js';
import type { Sql } from '../sql.js';
import { countedTotal } from './list-counts.js';
import { principalClaims, type PrincipalClaim } from './principal-claims.js';
import { quotaCounters, type QuotaCounter } from './quota-repo.js';
import type {
  NewEmail,
  EmailSource,
  StoredAttachment,
  AttachmentRaw,
  EmailRow,
  EmailSummaryRow,
  EmailFilter,
  EmailRaw,
  IdempotencyCompletion,
} from '../../domain/entities/emails.js';

export const toAttachment = (r: AttachmentRaw): StoredAttachment => ({
  filename: r.filename,
  contentType: r.content_type,
  content: r.content,
  contentId: r.content_id ?? '',
});

export const toEmail = (r: EmailRaw): EmailRow => ({
  id: r.id,
  accountId: r.account_id,
  jobType: r.job_type,
  jobId: r.job_id,
  ...r.mailboxes,
  senderDomain: r.sender_domain,
  subject: r.subject,
  html: r.html,
  text: r.text_body,
  headers: r.headers,
  tags: r.tags,
  status: r.status,
  messageId: r.message_id,
  headerMessageId: r.header_message_id,
  attachmentCount: r.attachment_count,
  attempts: r.attempts,
  createdAt: r.created_at,
  sentAt: r.sent_at,
  remainingRecipients: r.remaining_recipients ?? null,
  traceparent: r.traceparent ?? null,
  template: r.template ?? null,
  stream: r.stream,
  topic: r.topic,
});

/*
 * A note on postgres.js helpers (`${sql(rows)}`): the library picks insert, update or select form by the
 * keyword nearest before the helper, comparing the last occurrence of each keyword's exact spelling. Keep
 * every `name as (insert into table ${sql(rows)}` on one line, or a CTE's `as (` wins and the rows are
 * written as a select list.
 */

const bare = (list: Mailbox[]) => list.map((m) => m.address);

/** The parsed address fields of a draft, as the `mailboxes` column (and a scheduled draft) keep them. */
export function mailboxesOf(d: Mailboxes): Mailboxes {
  return { from: d.from, to: d.to, cc: d.cc, bcc: d.bcc, replyTo: d.replyTo };
}

/**
 * The column values of one email: the only place an email row is built, for direct, batch and scheduled
 * emails alike. `json` wraps the jsonb columns' values as the statement writing them needs (postgres.js
 * parameters, or nothing when the whole row travels as JSON).
 */
export function emailRow(e: EmailSource, json: (value: object) => unknown = (value) => value) {
  return {
    id: e.id,
    account_id: e.accountId,
    api_key_id: e.apiKeyId,
    job_type: e.jobType,
    job_id: e.jobId,
    mailboxes: json(mailboxesOf(e.draft)),
    from_address: e.draft.from.address,
    to_addresses: bare(e.draft.to),
    cc_addresses: bare(e.draft.cc),
    bcc_addresses: bare(e.draft.bcc),
    reply_to: bare(e.draft.replyTo),
    sender_domain: e.draft.senderDomain,
    subject: e.draft.subject,
    html: e.draft.html,
    text_body: e.draft.text,
    headers: json(e.draft.headers),
    tags: json(e.draft.tags),
    attachment_count: e.attachmentCount,
    size_bytes: e.draft.size,
    header_message_id: messageIdFor(e.id, e.draft.senderDomain),
    template: e.draft.template === undefined ? null : json(e.draft.template),
    // A scheduled draft stored before migration 25 has neither: it is transactional.
    stream: e.draft.stream ?? 'transactional',
    topic: e.draft.topic ?? null,
    // The span the email is accepted under, for its delivery span to continue (migration 0012 says why).
    traceparent: activeTraceparent(),
  };
}

/** Column values of accepted emails, for one multi-row insert. */
export function emailRows(sql: Sql, emails: NewEmail[]) {
  return emails.map((e) =>
    emailRow({ ...e, attachmentCount: e.draft.attachments.length }, (value) => sql.json(value as never)),
  );
}

/** Attachment rows of emails (or scheduled emails): owner_id is the owner's id. */
export function attachmentRows(owners: { id: string; draft: Pick<ValidDraft, 'attachments'> }[]) {
  return owners.flatMap((o) =>
    o.draft.attachments.map((a, position) => ({
      owner_id: o.id,
      position,
      filename: a.filename,
      content_type: a.contentType === '' ? 'application/octet-stream' : a.contentType,
      content: a.content,
      content_id: a.contentId === '' ? null : a.contentId,
    })),
  );
}

/** The CTE that stores an Idempotency-Key's answer in the same statement as what it answered for. */
export function idempotencyCte(sql: Sql, idem: IdempotencyCompletion | undefined) {
  return idem
    ? sql`, idempotency_saved as (
        insert into idempotency_keys (account_id, key, operation, request_hash, response)
        values (${idem.accountId}, ${idem.key}, ${idem.operation}, ${idem.requestHash}, ${sql.json(idem.response as never)})
        on conflict (account_id, key) do update set response = excluded.response)`
    : sql``;
}

export function createEmailsRepo(sql: Sql) {
  return {
    /**
     * Stores accepted emails, their attachments and their place in the delivery queue in one transaction,
     * with the Idempotency-Key's answer when there is one: either all of it is durable or none is.
     */
    async accept(
      emails: NewEmail[],
      options: {
        enqueue: boolean;
        idempotency?: IdempotencyCompletion;
        quota?: QuotaCounter[];
        claims?: PrincipalClaim[];
      },
    ): Promise<void> {
      const rows = emailRows(sql, emails);
      const attachments = attachmentRows(emails);
      // One statement whose data-modifying CTEs commit together or not at all: one round trip, where
      // BEGIN, the inserts and COMMIT took three (docs/benchmark.md, "Figures behind the code's choices").
      // The queue rows name the emails this statement writes (no foreign key checks them: migration 0035).
      // With `quota`, the statement counts the emails against it too (reserve_daily_quota, migration 0037):
      // joined into the last part, so that it runs; it raises MQ429 (isQuotaRefused) when a counter has no room.
      // With `claims`, it confirms the cached keys its emails were accepted on (confirm_principals, migration
      // 0038), joined the same way; it raises MQ401 (isClaimRefused) when one is gone or changed.
      const quota = options.quota && options.quota.length > 0 ? options.quota : undefined;
      const claims = options.claims && options.claims.length > 0 ? options.claims : undefined;
      await sql`
        with inserted as (insert into emails ${sql(rows as never)} returning id)
        ${attachments.length > 0 ? sql`, attachments_inserted as (insert into attachments ${sql(attachments as never)})` : sql``}
        ${idempotencyCte(sql, options.idempotency)}
        ${quota ? sql`, counted as (select reserve_daily_quota(${quotaCounters(sql, quota)}))` : sql``}
        ${claims ? sql`, confirmed as (select confirm_principals(${principalClaims(sql, claims)}))` : sql``}
        ${options.enqueue ? sql`insert into delivery_queue (email_id) select id from inserted` : sql`select count(*) from inserted`}
        ${quota ? sql`, counted` : sql``} ${claims ? sql`, confirmed` : sql``}`;
    },

    async get(accountId: string, id: string): Promise<EmailRow | undefined> {
      const [row] = await sql<EmailRaw[]>`select * from emails where id = ${id} and account_id = ${accountId}`;
      return row && toEmail(row);
    },

    async attachments(ownerId: string): Promise<StoredAttachment[]> {
      const rows = await sql<AttachmentRaw[]>`
        select filename, content_type, content, content_id from attachments where owner_id = ${ownerId} order by position`;
      return rows.map(toAttachment);
    },

    /**
     * A page of the account's emails, newest first, and how many match in all. The page's ids come from an
     * index-only scan of the index matching the filter (a deep offset skips index entries, not rows), and
     * only those rows are read. The total is the counters' (list-counts.ts), or with a job id a count
     * bounded by the job's size (a batch's 100 emails at most, a scheduled email's one).
     */
    async list(
      accountId: string,
      filter: EmailFilter,
      limit: number,
      offset: number,
    ): Promise<{ rows: EmailSummaryRow[]; total: number }> {
      // `job_id <> ''` repeats the job id index's predicate, so that a generic plan may still use it.
      const where = sql`account_id = ${accountId}
        ${filter.status ? sql`and status = ${filter.status}` : sql``}
        ${filter.jobType ? sql`and job_type = ${filter.jobType}` : sql``}
        ${filter.jobId ? sql`and job_id = ${filter.jobId} and job_id <> ''` : sql``}
        ${filter.stream ? sql`and stream = ${filter.stream}` : sql``}`;
      const [rows, total] = await Promise.all([
        sql<
          {
            id: string;
            from: Mailbox;
            to: Mailbox[];
            subject: string;
            status: EmailStatus;
            created_at: Date;
            stream: Stream;
            topic: string | null;
          }[]
        >`
          select id, mailboxes->'from' as from, mailboxes->'to' as to, subject, status, created_at, stream, topic
          from (select id from emails where ${where} order by id desc limit ${limit} offset ${offset}) page join emails using (id)
          order by id desc`,
        // The list counters are kept per status and job type, not per stream: a stream filter counts its rows.
        filter.jobId || filter.stream
          ? sql<{ n: number }[]>`select count(*)::int as n from emails where ${where}`.then(([r]) => r!.n)
          : countedTotal(sql, accountId, 'emails', filter),
      ]);
      return {
        rows: rows.map((r) => ({
          id: r.id,
          from: r.from,
          to: r.to,
          subject: r.subject,
          status: r.status,
          createdAt: r.created_at,
          stream: r.stream,
          topic: r.topic,
        })),
        total,
      };
    },

    /**
     * The email a report mailed back (ARF, DSN) is about, in any account: by the X-Mail-Email-Id it carried,
     * else by its Message-ID. `recipients` are the bare addresses of to, cc and bcc.
     */
    async findForFeedback(ref: {
      emailId?: string;
      headerMessageId?: string;
    }): Promise<{ id: string; status: EmailStatus; recipients: string[]; headerMessageId: string } | undefined> {
      const emailId = ref.emailId ?? null;
      const [row] = await sql<{ id: string; status: EmailStatus; recipients: string[]; headerMessageId: string }[]>`
        select id, status, to_addresses || cc_addresses || bcc_addresses as recipients, header_message_id as "headerMessageId" from emails
        where id = ${emailId} or header_message_id = ${ref.headerMessageId ?? null}
        order by id = ${emailId} desc nulls last limit 1`;
      return row;
    },
  };
}
export type EmailsRepo = ReturnType<typeof createEmailsRepo>;
