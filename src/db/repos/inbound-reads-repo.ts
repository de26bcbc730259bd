import type {
  InboundAttachmentRow,
  InboundAuthentication,
  InboundEmailRow,
  InboundHeader,
} from '../../domain/entities/inbound.js';
import type { Sql } from '../sql.js';

/**
 * The Message-IDs of In-Reply-To and References, In-Reply-To's first, each once: not a column of its own, as
 * only the arrival (tying a reply to an email) uses them; read back from the headers kept whole.
 */
function referencesOf(headers: InboundHeader[]): string[] {
  const ids = (name: string) =>
    headers.filter((h) => h.name.toLowerCase() === name).flatMap((h) => h.value.match(/<[^<>\s]+>/g) ?? []);
  return [...new Set([...ids('in-reply-to'), ...ids('references')])];
}

type Raw = {
  id: string;
  account_id: string;
  route_id: string;
  received_at: Date;
  envelope_from: string;
  envelope_to: string;
  remote_address: string;
  from_address: string;
  from_name: string;
  to_addresses: string[];
  cc_addresses: string[];
  reply_to_addresses: string[];
  subject: string;
  text_body: string;
  html_body: string;
  stripped_text: string;
  headers: InboundHeader[];
  message_id: string;
  in_reply_to: string;
  mailbox_hash: string;
  attachments: {
    filename: string | null;
    content_type: string;
    size: number;
    content_id: string | null;
    key: string;
  }[];
  authentication: Partial<InboundAuthentication>;
  raw_key: string;
  raw_size: number;
  reply_to_email_id: string | null;
};

// raw_size is a bigint (a message is at most MAILER_INBOUND_MAX_BYTES, far below 2^53): read as a number.
const COLUMNS = (sql: Sql) => sql`
  id, account_id, route_id, received_at, envelope_from, envelope_to, remote_address, from_address, from_name,
  to_addresses, cc_addresses, reply_to_addresses, subject, text_body, html_body, stripped_text, headers, message_id,
  in_reply_to, mailbox_hash, attachments, authentication, raw_key, raw_size::float8 as raw_size, reply_to_email_id`;

const toAttachment = (a: Raw['attachments'][number]): InboundAttachmentRow => ({
  filename: a.filename ?? null,
  contentType: a.content_type,
  size: Number(a.size),
  contentId: a.content_id ?? null,
  key: a.key,
});

const toInbound = (r: Raw): InboundEmailRow => ({
  id: r.id,
  accountId: r.account_id,
  routeId: r.route_id,
  receivedAt: r.received_at,
  envelopeFrom: r.envelope_from,
  envelopeTo: r.envelope_to,
  remoteAddress: r.remote_address,
  from: r.from_address,
  fromName: r.from_name,
  to: r.to_addresses,
  cc: r.cc_addresses,
  replyTo: r.reply_to_addresses,
  subject: r.subject,
  text: r.text_body,
  html: r.html_body,
  strippedText: r.stripped_text,
  headers: r.headers,
  messageId: r.message_id,
  inReplyTo: r.in_reply_to,
  references: referencesOf(r.headers),
  mailboxHash: r.mailbox_hash,
  attachments: r.attachments.map(toAttachment),
  authentication: {
    spf: r.authentication.spf ?? 'none',
    dkim: r.authentication.dkim ?? 'none',
    dmarc: r.authentication.dmarc ?? 'none',
  },
  rawKey: r.raw_key,
  rawSize: r.raw_size,
  replyToEmailId: r.reply_to_email_id,
});

/**
 * Reading inbound mail back (CONTRACT.md "Inbound mail"): an account's messages newest first, and one by id. Their
 * bytes are read from the blob store (inbound-blobs-repo.ts).
 */
export function createInboundReadsRepo(sql: Sql) {
  return {
    /** The account's inbound emails, newest first (the index on account_id, received_at, id), and how many. */
    async list(accountId: string, limit: number, offset: number): Promise<{ rows: InboundEmailRow[]; total: number }> {
      const [rows, [count]] = await Promise.all([
        sql<Raw[]>`
          select ${COLUMNS(sql)} from inbound_emails where account_id = ${accountId}
          order by received_at desc, id desc limit ${limit} offset ${offset}`,
        sql<{ n: number }[]>`select count(*)::int as n from inbound_emails where account_id = ${accountId}`,
      ]);
      return { rows: rows.map(toInbound), total: count?.n ?? 0 };
    },

    /** One inbound email of the account (undefined: none, or another account's). */
    async get(accountId: string, id: string): Promise<InboundEmailRow | undefined> {
      const [row] = await sql<Raw[]>`
        select ${COLUMNS(sql)} from inbound_emails where id = ${id} and account_id = ${accountId}`;
      return row && toInbound(row);
    },

    /** The account an inbound email belongs to (the management API names the email alone). */
    async ownerOf(id: string): Promise<string | undefined> {
      const [row] = await sql<{ account_id: string }[]>`select account_id from inbound_emails where id = ${id}`;
      return row?.account_id;
    },
  };
}
export type InboundReadsRepo = ReturnType<typeof createInboundReadsRepo>;
