import { ulid } from 'ulid';
import { ID_PREFIXES, type IdKind } from '../../src/ids.js';
import type { Sql } from '../../src/db/sql.js';

export const DAY_MS = 86_400_000;

/** An id of `kind` made `days` ago: ids are time-ordered, and retention's cutoffs are ids. */
export const idDaysAgo = (kind: IdKind, days: number) =>
  `${ID_PREFIXES[kind]}_${ulid(Date.now() - days * DAY_MS).toLowerCase()}`;

/** One email row as acceptance writes it, with content and one attachment; `status` and `id` as the test needs. */
export async function insertEmail(
  sql: Sql,
  e: {
    id: string;
    accountId: string;
    status?: string;
    to?: string[];
    subject?: string;
    jobType?: string;
    jobId?: string;
  },
): Promise<void> {
  const to = e.to ?? ['rcpt@example.net'];
  const mailboxes = {
    from: { name: 'Sender', address: 'sender@example.com' },
    to: to.map((address) => ({ name: '', address })),
    cc: [],
    bcc: [],
    replyTo: [],
  };
  await sql`
    insert into emails (id, account_id, job_type, job_id, from_address, to_addresses, subject, html, text_body, headers, tags, attachment_count,
      size_bytes, status, header_message_id, mailboxes, sender_domain)
    values (${e.id}, ${e.accountId}, ${e.jobType ?? 'direct'}, ${e.jobId ?? ''}, 'sender@example.com', ${to}, ${e.subject ?? 'Subject'},
      '<p>html body</p>', 'text body', ${sql.json({ 'X-Custom': 'header value' })}, ${sql.json({ kind: 'tag' })}, 1,
      100, ${e.status ?? 'delivered'}, ${`<${e.id}@example.com>`}, ${sql.json(mailboxes)}, 'example.com')`;
  await sql`insert into attachments (owner_id, position, filename, content_type, content) values (${e.id}, 0, 'a.txt', 'text/plain', ${Buffer.from('attached')})`;
}
