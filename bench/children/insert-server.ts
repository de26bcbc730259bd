import fastify from 'fastify';
import postgres from 'postgres';
import { newId } from '../../src/ids.js';
import { serve } from './ipc.js';

/**
 * Baseline 2: the same request, answered after ONE autocommitted INSERT of the same row the service
 * stores (the service's own `emails` table, same columns, indexes and foreign key, in a database of its
 * own on the same PostgreSQL), through the `postgres` package with the service's pool size (40).
 * What "accept an email durably" costs at the least: parse, one durable commit, answer.
 */
const url = process.env.BENCH_DATABASE_URL;
const accountId = process.env.BENCH_ACCOUNT_ID;
if (!url || !accountId) throw new Error('BENCH_DATABASE_URL and BENCH_ACCOUNT_ID are required');

const sql = postgres(url, { max: 40, idle_timeout: 60, transform: { undefined: null }, onnotice: () => {} });

interface Body {
  from: string;
  to: string[];
  cc?: string[];
  bcc?: string[];
  reply_to?: string[];
  subject: string;
  html?: string;
  text?: string;
  headers?: Record<string, string>;
  tags?: Record<string, string>;
}

/** `Name <address>` or `address` as the service stores a parsed mailbox (migration 4); the bench sends only these forms. */
const mailbox = (text: string) => {
  const m = /^\s*(.*?)\s*<([^<>]*)>\s*$/.exec(text);
  return m ? { name: m[1]!.replace(/^"|"$/g, ''), address: m[2]! } : { name: '', address: text.trim() };
};
const bare = (list: string[] | undefined) => (list ?? []).map((t) => mailbox(t).address);

const app = fastify({ logger: false, bodyLimit: 32 * 1024 * 1024 });
app.post('/v1/mail/emails', async (request) => {
  const b = request.body as Body;
  const id = newId('email');
  const from = mailbox(b.from);
  const domain = from.address.slice(from.address.lastIndexOf('@') + 1).toLowerCase();
  const row = {
    id,
    account_id: accountId,
    api_key_id: 'key_bench',
    job_type: 'direct',
    job_id: '',
    from_address: from.address,
    to_addresses: bare(b.to),
    cc_addresses: bare(b.cc),
    bcc_addresses: bare(b.bcc),
    reply_to: bare(b.reply_to),
    mailboxes: sql.json({
      from,
      to: (b.to ?? []).map(mailbox),
      cc: (b.cc ?? []).map(mailbox),
      bcc: (b.bcc ?? []).map(mailbox),
      replyTo: (b.reply_to ?? []).map(mailbox),
    }),
    sender_domain: domain,
    subject: b.subject,
    html: b.html ?? '',
    text_body: b.text ?? '',
    headers: sql.json(b.headers ?? {}),
    tags: sql.json(b.tags ?? {}),
    attachment_count: 0,
    size_bytes: Buffer.byteLength(b.subject) + Buffer.byteLength(b.html ?? '') + Buffer.byteLength(b.text ?? ''),
    header_message_id: `<${id}@${domain}>`,
  };
  await sql`insert into emails ${sql(row)}`;
  return { id, message_id: '', status: 'pending' };
});
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
serve({}, { port: typeof address === 'object' && address ? address.port : 0 }, async () => {
  await app.close();
  await sql.end({ timeout: 2 });
});
