import type { Sql } from '../../src/db/sql.js';
import { newId } from '../../src/ids.js';

/**
 * Inbound mail written straight into the tables of migration 29, as the receive pipeline stores it: the row,
 * its bytes in inbound_blobs (chunks of at most 256 KiB under `<in_id>/raw` and `<in_id>/<n>`), its `inbound`
 * event (inbound_id set, email_id NULL, the inbound email as data) and, when it answers an email, a `reply`
 * event on that email. For the tests of reading it back, independent of the listener.
 */

export interface InboundAttachmentInput {
  filename: string | null;
  contentType: string;
  contentId?: string | null;
  bytes: Buffer;
}

export interface InboundInput {
  accountId: string;
  id?: string;
  raw: Buffer;
  from?: string;
  to?: string[];
  cc?: string[];
  subject?: string;
  text?: string;
  html?: string;
  messageId?: string;
  attachments?: InboundAttachmentInput[];
  receivedAt?: Date;
  replyToEmailId?: string | null;
  /** Stored chunk size (the store's is 256 KiB): smaller makes a test cross chunk boundaries with less data. */
  chunkBytes?: number;
}

const CHUNK = 256 * 1024;

async function storeBlob(sql: Sql, key: string, bytes: Buffer, chunkBytes: number): Promise<void> {
  for (let seq = 0, at = 0; at < bytes.length; seq++, at += chunkBytes) {
    await sql`insert into inbound_blobs (key, seq, data) values (${key}, ${seq}, ${bytes.subarray(at, at + chunkBytes)})`;
  }
}

/** Stores one inbound email (row, bytes, events); answers its id, its inbound event's id and the data. */
export async function insertInbound(
  sql: Sql,
  input: InboundInput,
): Promise<{ id: string; eventId: string; data: Record<string, unknown> }> {
  const id = input.id ?? newId('inbound');
  const chunkBytes = input.chunkBytes ?? CHUNK;
  const receivedAt = input.receivedAt ?? new Date();
  const attachments = (input.attachments ?? []).map((a, n) => ({
    filename: a.filename,
    content_type: a.contentType,
    size: a.bytes.length,
    content_id: a.contentId ?? null,
    key: `${id}/${n}`,
  }));
  const row = {
    from: input.from ?? 'stranger@elsewhere.example',
    to: input.to ?? ['support@inbound.example'],
    cc: input.cc ?? [],
    subject: input.subject ?? 'Hello',
    text: input.text ?? 'Hi there',
    html: input.html ?? '',
    messageId: input.messageId ?? `<${id}@elsewhere.example>`,
  };
  const headers = [
    { name: 'From', value: row.from },
    { name: 'To', value: row.to.join(', ') },
    { name: 'Subject', value: row.subject },
    { name: 'Message-ID', value: row.messageId },
  ];
  const authentication = { spf: 'pass', dkim: 'none', dmarc: 'none' };
  await sql`
    insert into inbound_emails (id, account_id, route_id, received_at, envelope_from, envelope_to, from_address, to_addresses,
      cc_addresses, subject, text_body, html_body, stripped_text, headers, message_id, attachments, authentication, raw_key,
      raw_size, reply_to_email_id)
    values (${id}, ${input.accountId}, 'rt_test', ${receivedAt}, ${row.from}, ${row.to[0]!}, ${row.from}, ${sql.json(row.to)},
      ${sql.json(row.cc)}, ${row.subject}, ${row.text}, ${row.html}, ${row.text}, ${sql.json(headers)}, ${row.messageId},
      ${sql.json(attachments)}, ${sql.json(authentication)}, ${`${id}/raw`}, ${input.raw.length},
      ${input.replyToEmailId ?? null})`;
  await storeBlob(sql, `${id}/raw`, input.raw, chunkBytes);
  for (const [n, a] of (input.attachments ?? []).entries()) await storeBlob(sql, `${id}/${n}`, a.bytes, chunkBytes);
  const data = {
    id,
    route_id: 'rt_test',
    received_at: receivedAt.toISOString(),
    from: row.from,
    from_name: '',
    to: row.to,
    cc: row.cc,
    reply_to: [],
    subject: row.subject,
    text: row.text,
    html: row.html,
    stripped_text: row.text,
    headers,
    message_id: row.messageId,
    in_reply_to: '',
    mailbox_hash: '',
    attachments: attachments.map(({ key: _key, ...a }) => a),
    authentication,
    reply_to_email_id: input.replyToEmailId ?? null,
  };
  const eventId = newId('event');
  await sql`
    insert into events (id, email_id, inbound_id, account_id, type, data, created_at)
    values (${eventId}, null, ${id}, ${input.accountId}, 'inbound', ${sql.json(data)}, ${receivedAt})`;
  if (input.replyToEmailId)
    await sql`
      insert into events (id, email_id, inbound_id, account_id, type, data, created_at)
      values (${newId('event')}, ${input.replyToEmailId}, null, ${input.accountId}, 'reply',
        ${sql.json({ inbound_id: id, from: row.from })}, ${receivedAt})`;
  return { id, eventId, data };
}
