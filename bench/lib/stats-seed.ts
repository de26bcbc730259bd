import type postgres from 'postgres';

/**
 * The stats figure's data (bench/parts/stats.ts), written straight into the service's database by
 * generate_series (no API, no Temporal): `emails` emails of one account, accepted evenly over the last 90 days,
 * with the events delivery, tracking and feedback would have recorded. Email i (1-based), h = a hash of i:
 * - ids are the service's shape (`em_` + ULID, lower case) with the ULID's time the email's, so every query
 *   that selects by id range sees them as it sees real mail; events likewise (`evt_`);
 * - recipient domain skewed over 200 domains (gmail.com, outlook.com, yahoo.com, hotmail.com, icloud.com, then
 *   d5.example ...): the first few take most mail, as in life; one email in 20 has a cc at gmail.com;
 * - sender domain s0..s4.bench.test; stream broadcast for one in 5; tags campaign=c0..c19 and type=t0..t2;
 * - outcome: 1 % every recipient suppressed (a Suppressed bounce, no send), 2 % bounced Permanent and 1 %
 *   Transient (each domain its own reply), the rest delivered; 25 % opened (8 % twice), 6 % clicked, 0.1 %
 *   complained, 0.3 % of the broadcast ones unsubscribed.
 * The sessions run with session_replication_role = replica (the bench's PostgreSQL user is its superuser): no
 * foreign key check, list counter or webhook trigger per row; each chunk is one transaction, so its events
 * share one `tx`, as a group of outcomes recorded in one statement does.
 */

export interface StatsSeed {
  emails: number;
  events: number;
  /** Wall seconds. */
  seconds: number;
}

const CHUNK = 50_000;
const WRITERS = 2;
const SPAN_MS = 90 * 86_400_000;

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';
/** The 10 characters of a ULID's time (ms since 1970, an SQL bigint expression), lower case, written out inline. */
const ulidTime = (ms: string) =>
  Array.from({ length: 10 }, (_, k) => `substr('${CROCKFORD}', (((${ms}) >> ${45 - 5 * k}) & 31)::int + 1, 1)`).join(
    ' || ',
  );

const FUNCTIONS = `
  create function pg_temp.rdomain(n int) returns text language sql immutable as $$
    select case n when 0 then 'gmail.com' when 1 then 'outlook.com' when 2 then 'yahoo.com' when 3 then 'hotmail.com'
      when 4 then 'icloud.com' else 'd' || n || '.example' end $$;
  create function pg_temp.reply(domain text, address text, transient boolean) returns text language sql immutable as $$
    select case
      when transient and domain = 'outlook.com' then '550 5.7.1 Service unavailable, Client host [203.0.113.7] blocked using Spamhaus'
      when transient then '554 5.7.1 Message rejected as spam by ' || domain
      when domain = 'gmail.com' then '550-5.1.1 The email account that you tried to reach does not exist: ' || address
      when domain = 'outlook.com' then '550 5.5.0 Requested action not taken: mailbox unavailable (' || address || ')'
      else '550 5.1.1 <' || address || '>: Recipient address rejected: User unknown in ' || domain end $$`;

/** One chunk of emails (i from..to) and their events, in one transaction. */
function chunk(from: number, to: number, total: number, account: string, nowMs: number): string {
  return `
  with g as (
    select i, t, 'em_' || ${ulidTime('t')} || lpad(i::text, 16, '0') as id, rd,
      'u' || i || '@' || rd as rcpt,
      case when i % 20 = 1 then array['c' || i || '@gmail.com'] else '{}'::text[] end as cc,
      case when i % 5 = 0 then 'broadcast' else 'transactional' end as stream,
      case when o < 10 then 'suppressed' when o < 30 then 'permanent' when o < 40 then 'transient' else 'delivered' end as outcome,
      h
    from (
      select i, ${nowMs}::bigint - ((${total}::bigint - i) * ${SPAN_MS}::bigint) / ${total} as t,
        pg_temp.rdomain(floor(200 * power((abs(hashint8(i)) % 10007) / 10007.0, 3))::int) as rd,
        abs(hashint8(i * 7919::bigint)) % 1000 as o, abs(hashint8(i * 104729::bigint)) % 1000 as h
      from generate_series(${from}, ${to}) i) x),
  emails_in as (
    insert into emails (id, account_id, job_type, from_address, to_addresses, cc_addresses, subject, size_bytes, status,
      header_message_id, mailboxes, sender_domain, stream, tags, attempts, created_at, sent_at)
    select id, '${account}', 'direct', 'news@s' || (i % 5) || '.bench.test', array[rcpt], cc, 'Stats ' || i, 900,
      case when outcome = 'delivered' then 'delivered' else 'bounced' end, '<' || id || '@bench.test>',
      jsonb_build_object('from', jsonb_build_object('name', '', 'address', 'news@s' || (i % 5) || '.bench.test'),
        'to', jsonb_build_array(jsonb_build_object('name', '', 'address', rcpt)), 'cc', '[]'::jsonb, 'bcc', '[]'::jsonb,
        'replyTo', '[]'::jsonb),
      's' || (i % 5) || '.bench.test', stream, jsonb_build_object('campaign', 'c' || (i % 20), 'type', 't' || (i % 3)),
      1, to_timestamp(t / 1000.0), case when outcome <> 'suppressed' then to_timestamp(t / 1000.0) end
    from g
    returning 1),
  ev as (
    select i, t, id, 0 as k, 'send' as type, '{}'::jsonb as data from g where outcome <> 'suppressed'
    union all
    select i, t, id, 0, 'bounce', jsonb_build_object('bounce_type', 'Permanent', 'bounce_subtype', 'Suppressed',
      'bounced_recipients', jsonb_build_array(jsonb_build_object('email_address', rcpt, 'status', '5.1.1',
        'diagnostic_code', 'not sent: the address is on the account''s suppression list')))
    from g where outcome = 'suppressed'
    union all
    select i, t, id, 1, 'delivery', jsonb_build_object('processing_time_millis', 800, 'smtp_response', '250 2.0.0 OK',
      'recipients', to_jsonb(array[rcpt] || cc))
    from g where outcome = 'delivered'
    union all
    select i, t, id, 1, 'bounce', jsonb_build_object('bounce_type', case when outcome = 'transient' then 'Transient' else 'Permanent' end,
      'bounce_subtype', 'General', 'bounced_recipients', jsonb_build_array(jsonb_build_object('email_address', rcpt,
        'status', case when outcome = 'transient' then '5.7.1' else '5.1.1' end,
        'diagnostic_code', pg_temp.reply(rd, rcpt, outcome = 'transient'))))
    from g where outcome in ('permanent', 'transient')
    union all
    select i, t, id, 2, 'open', '{}'::jsonb from g where outcome = 'delivered' and h < 250
    union all
    select i, t, id, 3, 'open', '{}'::jsonb from g where outcome = 'delivered' and h < 80
    union all
    select i, t, id, 4, 'click', '{"link": "https://shop.bench.test/"}'::jsonb from g where outcome = 'delivered' and h < 60
    union all
    select i, t, id, 5, 'complaint', jsonb_build_object('complaint_feedback_type', 'abuse', 'complained_recipients', jsonb_build_array(rcpt))
    from g where outcome = 'delivered' and h = 999
    union all
    select i, t, id, 6, 'unsubscribe', jsonb_build_object('recipient', rcpt, 'topic', null)
    from g where outcome = 'delivered' and stream = 'broadcast' and h >= 990 and h < 999),
  events_in as (
    insert into events (id, email_id, account_id, type, data, created_at)
    select 'evt_' || ${ulidTime('t + k * 1000')} || lpad((i * 8 + k)::text, 16, '0'), id, '${account}', type, data,
      to_timestamp((t + k * 1000) / 1000.0)
    from ev
    returning 1)
  select (select count(*) from emails_in)::int as emails, (select count(*) from events_in)::int as events`;
}

export async function seedStats(
  sql: postgres.Sql,
  shape: { emails: number; account: string },
  log: (msg: string) => void,
): Promise<StatsSeed> {
  const t0 = performance.now();
  const nowMs = Date.now();
  const chunks: [number, number][] = [];
  for (let from = 1; from <= shape.emails; from += CHUNK) chunks.push([from, Math.min(shape.emails, from + CHUNK - 1)]);
  let emails = 0;
  let events = 0;
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      const w = await sql.reserve();
      try {
        await w.unsafe(`set synchronous_commit = off; set session_replication_role = replica; ${FUNCTIONS}`);
        for (let c = chunks.shift(); c; c = chunks.shift()) {
          const [row] = await w.unsafe<{ emails: number; events: number }[]>(
            chunk(c[0], c[1], shape.emails, shape.account, nowMs),
          );
          emails += row!.emails;
          events += row!.events;
          if (emails % (CHUNK * 4) === 0)
            log(
              `stats: ${emails.toLocaleString('en')} emails, ${events.toLocaleString('en')} events in (${Math.round((performance.now() - t0) / 1000)} s)`,
            );
        }
      } finally {
        // A failed chunk leaves the other writer to stop at its next one: the pool must get both back to end.
        chunks.length = 0;
        w.release();
      }
    }),
  );
  await sql.unsafe('analyze emails, events');
  return { emails, events, seconds: Math.round((performance.now() - t0) / 100) / 10 };
}
