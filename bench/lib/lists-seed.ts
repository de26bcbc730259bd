import type postgres from 'postgres';

/**
 * The lists figure's data, written straight into the service's database by generate_series (no API, no
 * Temporal): `emails` emails, one in ten of them (interleaved, as time-ordered ids interleave accounts) in
 * the big account, the rest spread over 997 other accounts; plus the big account's scheduled emails and
 * batch jobs. Statuses and job types have realistic shares; bodies are small.
 *
 * Email i (1-based) of the database: k = i / 10 is its place in the big account's list when i % 10 = 0.
 * - job type by k % 20: 0 scheduled (5 %), 1..5 batch (25 %), else direct (70 %);
 * - status by a hash of i: delivered 88 %, sent 4 %, bounced 6 %, complained 1 %, pending 1 %;
 * - the same mailboxes for all (their size is what matters here).
 * - a batch job per 40 consecutive k (10 emails each), a scheduled email per scheduled email.
 * Ids are `em_00` + 24 digits: 29 characters like the service's `em_<ulid>`, and older than any of them.
 *
 * The emails' secondary indexes are dropped while the rows go in and built again after (from their own
 * definitions, so the schema stays the migrations'): building an index once is several times faster than
 * maintaining it row by row. The seeding sessions run with session_replication_role = replica (the bench's
 * PostgreSQL user is its superuser): no foreign key check or counter trigger per row; the counters are then
 * computed as migration 0014 computes them on an existing database.
 */

export interface SeedShape {
  emails: number;
  bigAccount: string;
}

export interface SeedResult {
  bigEmails: number;
  scheduled: number;
  batchJobs: number;
  /** Wall seconds: rows in, indexes built, VACUUM ANALYZE. */
  insertS: number;
  indexS: number;
  vacuumS: number;
}

const CHUNK = 500_000;
/** Two connections insert at once: one backend per core. */
const WRITERS = 2;
const MAILBOXES = JSON.stringify({
  from: { name: 'Shop', address: 'no-reply@example.com' },
  to: [{ name: '', address: 'user1234@example.net' }],
  cc: [],
  bcc: [],
  replyTo: [],
});
const FILLER_ACCOUNTS = 997;
const pad = (expr: string, width: number) => `lpad((${expr})::text, ${width}, '0')`;

// hashint8: PostgreSQL's own integer hash, uniform and independent of the job type's k % 20.
const STATUS = (
  i: string,
) => `(case when abs(hashint8(${i}) % 100) < 88 then 'delivered' when abs(hashint8(${i}) % 100) < 92 then 'sent'
  when abs(hashint8(${i}) % 100) < 98 then 'bounced' when abs(hashint8(${i}) % 100) < 99 then 'complained' else 'pending' end)`;
const JOB_TYPE = (k: string) =>
  `(case when ${k} % 20 = 0 then 'scheduled' when ${k} % 20 <= 5 then 'batch' else 'direct' end)`;

/** Filler accounts: inserted once, ids that sort before any real account's. */
async function seedAccounts(sql: postgres.Sql): Promise<void> {
  await sql.unsafe(`insert into accounts (id, name, daily_quota)
    select 'acc_00' || ${pad('a', 24)}, 'lists filler ' || a, 0 from generate_series(0, ${FILLER_ACCOUNTS - 1}) a on conflict do nothing`);
}

function emailsChunk(from: number, to: number, big: string, total: number): string {
  return `
  insert into emails (id, account_id, job_type, job_id, from_address, to_addresses, subject, html, text_body, size_bytes, status,
    header_message_id, message_id, mailboxes, sender_domain, attempts, created_at, sent_at)
  select 'em_00' || ${pad('i', 24)},
    case when i % 10 = 0 then '${big}' else 'acc_00' || ${pad(`i % ${FILLER_ACCOUNTS}`, 24)} end,
    jt,
    case when jt = 'direct' then ''
      when i % 10 <> 0 then (case when jt = 'batch' then 'bat_99' else 'sch_99' end) || ${pad('i', 23)}
      when jt = 'batch' then 'bat_00' || ${pad('k / 40', 23)}
      else 'sch_00' || ${pad('k', 23)} end,
    'no-reply@example.com', array['user' || (i % 5000) || '@example.net'], 'Order ' || i || ' shipped',
    '<p>Your order ' || i || ' is on its way.</p>', 'Your order ' || i || ' is on its way.', 900, st,
    'em_00' || ${pad('i', 24)} || '@example.com', case when st = 'pending' then '' else '<' || i || '@relay.example>' end,
    '${MAILBOXES}'::jsonb, 'example.com', case when st = 'pending' then 0 else 1 end,
    now() - (${total} - i) * interval '30 ms', case when st = 'pending' then null else now() - (${total} - i) * interval '30 ms' end
  from (select i, i / 10 as k, ${JOB_TYPE('(i / 10)')} as jt, ${STATUS('i')} as st from generate_series(${from}, ${to}) i) g`;
}

/** The big account's scheduled emails (the fired ones its emails point at, plus waiting and cancelled ones) and batch jobs. */
function jobsStatements(big: string, bigEmails: number): string[] {
  const waiting = Math.max(1, Math.floor(bigEmails / 100));
  return [
    `insert into scheduled_emails (id, account_id, draft, from_address, to_addresses, subject, scheduled_at, status, attempts, email_id, created_at, sent_at, cancelled_at, workflow_started)
     select 'sch_00' || ${pad('s', 23)}, '${big}',
       jsonb_build_object('from', jsonb_build_object('name', 'Shop', 'address', 'no-reply@example.com'),
         'to', jsonb_build_array(jsonb_build_object('name', '', 'address', 'user' || (s % 5000) || '@example.net')),
         'cc', '[]'::jsonb, 'bcc', '[]'::jsonb, 'replyTo', '[]'::jsonb, 'subject', 'Reminder ' || s, 'text', 'Reminder ' || s, 'html', '',
         'headers', '{}'::jsonb, 'tags', '{}'::jsonb, 'senderDomain', 'example.com', 'size', 600),
       'no-reply@example.com', array['user' || (s % 5000) || '@example.net'], 'Reminder ' || s,
       case when kind = 'sent' then now() - interval '1 day' else now() + interval '30 days' end,
       case when kind = 'sent' then 'sent' when kind = 'waiting' then 'enqueued' else 'cancelled' end,
       case when kind = 'sent' then 1 else 0 end,
       case when kind = 'sent' then 'em_00' || ${pad('s * 10', 24)} end,
       now() - interval '2 days', case when kind = 'sent' then now() - interval '1 day' end,
       case when kind = 'cancelled' then now() - interval '1 day' end, true
     from (select s, 'sent' as kind from generate_series(0, ${bigEmails - 1}) s where s % 20 = 0
           union all select ${bigEmails} + w, case when w % 3 = 0 then 'cancelled' else 'waiting' end from generate_series(0, ${waiting - 1}) w) x`,
    `insert into batch_jobs (id, account_id, status, total_count, sent_count, failed_count, created_at, started_at, completed_at, workflow_started)
     select 'bat_00' || ${pad('b', 23)}, '${big}', case when b % 50 = 0 then 'failed' else 'completed' end, 10,
       case when b % 50 = 0 then 0 else 9 end, case when b % 50 = 0 then 10 else 1 end,
       now() - interval '2 days', now() - interval '2 days', now() - interval '2 days', true
     from generate_series(0, ${Math.floor(bigEmails / 40)}) b`,
  ];
}

const seconds = (t: number) => Math.round((performance.now() - t) / 100) / 10;

/** Each seeding session: no wait for WAL flushes, and no triggers (foreign keys, counters) row by row. */
async function writer(sql: postgres.Sql): Promise<postgres.ReservedSql> {
  const w = await sql.reserve();
  await w.unsafe(
    `set synchronous_commit = off; set session_replication_role = replica; set maintenance_work_mem = '512MB'; set max_parallel_maintenance_workers = 2`,
  );
  return w;
}

/** The counters as migration 0014 computes them, the seeding having bypassed the triggers. */
const RECOUNT = `
  delete from list_counts;
  insert into list_counts (account_id, list, status, job_type, slot, n)
  select account_id, 'emails', status, job_type, 0, count(*) from emails group by account_id, status, job_type;
  insert into list_counts (account_id, list, status, job_type, slot, n)
  select account_id, 'scheduled', status, '', 0, count(*) from scheduled_emails group by account_id, status;
  insert into list_counts (account_id, list, status, job_type, slot, n)
  select account_id, 'batch', status, '', 0, count(*) from batch_jobs group by account_id, status`;

async function insertEmails(sql: postgres.Sql, shape: SeedShape, log: (msg: string) => void): Promise<void> {
  const t = performance.now();
  const chunks: [number, number][] = [];
  for (let from = 1; from <= shape.emails; from += CHUNK) chunks.push([from, Math.min(shape.emails, from + CHUNK - 1)]);
  let done = 0;
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      const w = await writer(sql);
      for (let c = chunks.shift(); c; c = chunks.shift()) {
        await w.unsafe(emailsChunk(c[0], c[1], shape.bigAccount, shape.emails));
        done += c[1] - c[0] + 1;
        log(`lists: ${done.toLocaleString('en')} of ${shape.emails.toLocaleString('en')} emails in (${seconds(t)} s)`);
      }
      w.release();
    }),
  );
}

export async function seedLists(sql: postgres.Sql, shape: SeedShape, log: (msg: string) => void): Promise<SeedResult> {
  const w = await writer(sql);
  await seedAccounts(w);
  const indexes = await w<{ name: string; def: string }[]>`
    select i.indexname as name, i.indexdef as def from pg_indexes i
    where i.tablename = 'emails' and i.schemaname = current_schema()
      and not exists (select 1 from pg_constraint c where c.conname = i.indexname)`;
  for (const ix of indexes) await w.unsafe(`drop index ${ix.name}`);

  let t = performance.now();
  await insertEmails(sql, shape, log);
  const bigEmails = Math.floor(shape.emails / 10);
  for (const statement of jobsStatements(shape.bigAccount, bigEmails)) await w.unsafe(statement);
  await w.unsafe(RECOUNT);
  const insertS = seconds(t);

  t = performance.now();
  // Two at a time, one per core (a build is one process unless PostgreSQL grants it parallel workers).
  const defs = indexes.map((ix) => ix.def);
  const w2 = await writer(sql);
  await Promise.all(
    [w, w2].map(async (c) => {
      for (let def = defs.shift(); def; def = defs.shift()) await c.unsafe(def);
    }),
  );
  w2.release();
  const indexS = seconds(t);
  t = performance.now();
  await w.unsafe(`vacuum (analyze) emails, scheduled_emails, batch_jobs, list_counts`);
  const vacuumS = seconds(t);
  const [jobs] = await w<{ scheduled: number; batch: number }[]>`
    select (select count(*) from scheduled_emails where account_id = ${shape.bigAccount})::int as scheduled,
      (select count(*) from batch_jobs where account_id = ${shape.bigAccount})::int as batch`;
  w.release();
  return { bigEmails, scheduled: jobs!.scheduled, batchJobs: jobs!.batch, insertS, indexS, vacuumS };
}
