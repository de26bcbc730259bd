import type { StatsDimension, StatsGroup } from '../../domain/catalog.js';
import type { StatsQuery, StatsRow } from '../../domain/entities/stats.js';
import { idAt } from '../../ids.js';
import type { Sql, Tx } from '../sql.js';

/**
 * GET /stats from the rollup of migration 0031 (docs/api.md "Stats" says what each counter counts).
 *
 * The fold adds an account's events to `stats_rollup` in feed order (tx, id) and moves the account's mark in the
 * same statement; it reads only events whose transaction is older than every one still open (as the events
 * feed does, event-feed-repo.ts), so an event committed after a later one is still folded, once. A read sums
 * the rollup's rows of the range and adds, in the same statement (one snapshot, so a fold committing meanwhile
 * is seen whole or not at all), what is not folded yet: the events after the mark and the emails still
 * pending. Both use the rules of `facts` below, so an answer is current whenever the fold last ran.
 */

/** At most this many events per fold statement: one short transaction each, repeated until caught up. */
export const FOLD_BATCH = 20_000;
/** Sample replies kept per recipient domain, and shown. */
const REPLIES_KEPT = 5;
const REPLIES_SHOWN = 3;
const REPLY_MAX_CHARS = 300;
/** Anything shaped like an address in a server's reply: replaced by `<address>`, so samples name nobody. */
const ADDRESS_IN_REPLY = `<?[^][:space:]<>"'(),;:[]+@[^][:space:]<>"'(),;:[]+>?`;
const INT_MAX = 2_147_483_647;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** The rollup's dimension a grouping sums (a day sums the stream rows: every email has exactly one stream). */
const DIMENSION: Record<StatsGroup, StatsDimension> = {
  day: 'stream',
  domain: 'domain',
  recipient_domain: 'recipient_domain',
  tag: 'tag',
  stream: 'stream',
};

const COUNTERS = ['accepted', 'delivered', 'deferred', 'bounced', 'complained', 'opened', 'clicked', 'unsubscribed'];
/** The counters the rollup keeps (deferred is a state of pending emails, read live). */
const FOLDED = COUNTERS.filter((c) => c !== 'deferred');

type Db = Sql | Tx;
/** An account's fold mark: the last event folded, in feed order. */
type Mark = { tx: string; id: string };

/** The domain of an address column or expression, in lower case. */
const domainOf = (sql: Db, expr: string) => sql.unsafe(`lower(split_part(${expr}, '@', -1))`);

/**
 * `evm` (the events of CTE `ev` with their email) and `facts`: one row per recipient and thing that happened to
 * it, with the email's day of acceptance, sender domain, stream and tags (docs/api.md "Stats"):
 * - accepted: every recipient, once per email, at its `send` (recorded once, when it is first handed over),
 *   else at the `reject` or all-suppressed `bounce` that ended an email that never had one;
 * - delivered: the recipients a `delivery` names; bounced: those of a `General` bounce (Permanent or
 *   Transient), with the server's reply; a `Suppressed` one was never offered to a server and counts in none;
 * - complained: the recipients a complaint names (the email's first recipient when it names nobody);
 * - opened, clicked: the email's first `open` / `click` event, once per email, under its first recipient (the
 *   pixel and links are one per email, so they cannot tell which recipient it was);
 * - unsubscribed: the recipient of an `unsubscribe`.
 */
function facts(sql: Db) {
  const first = domainOf(sql, 'evm.rcpts[1]');
  const zero = (but: string) =>
    sql.unsafe(FOLDED.map((c) => `${c === but ? '1' : '0'} as ${c}`).join(', ') + ', 0 as deferred');
  return sql`
    evm as (
      select ev.id, ev.tx, ev.type, ev.data, ev.email_id, ev.created_at as at,
        (m.created_at at time zone 'utc')::date as day, m.sender_domain, m.stream, m.tags,
        m.to_addresses || m.cc_addresses || m.bcc_addresses as rcpts
      from ev join emails m on m.id = ev.email_id),
    facts as (
      select evm.day, evm.sender_domain, evm.stream, evm.tags, ${domainOf(sql, 'u.r')} as rdomain, ${zero('accepted')},
        null::text as reply, evm.at
      from evm cross join lateral (select distinct lower(x) as r from unnest(evm.rcpts) x) u
      where evm.type = 'send'
        or ((evm.type = 'reject' or (evm.type = 'bounce' and evm.data->>'bounce_subtype' = 'Suppressed'))
          and not exists (select 1 from events s where s.email_id = evm.email_id and s.type = 'send'))
      union all
      select evm.day, evm.sender_domain, evm.stream, evm.tags, ${domainOf(sql, 'r')}, ${zero('delivered')}, null, evm.at
      from evm cross join lateral jsonb_array_elements_text(evm.data->'recipients') r
      where evm.type = 'delivery'
      union all
      select evm.day, evm.sender_domain, evm.stream, evm.tags, ${domainOf(sql, "b->>'email_address'")}, ${zero('bounced')},
        b->>'diagnostic_code', evm.at
      from evm cross join lateral jsonb_array_elements(evm.data->'bounced_recipients') b
      where evm.type = 'bounce' and evm.data->>'bounce_subtype' = 'General'
      union all
      select evm.day, evm.sender_domain, evm.stream, evm.tags, coalesce(${domainOf(sql, 'c')}, ${first}), ${zero('complained')},
        null, evm.at
      from evm cross join lateral (
        select c from jsonb_array_elements_text(evm.data->'complained_recipients') c
        union all select null where coalesce(jsonb_array_length(evm.data->'complained_recipients'), 0) = 0) n
      where evm.type = 'complaint'
      union all
      select evm.day, evm.sender_domain, evm.stream, evm.tags, ${first},
        0, 0, 0, 0, (evm.type = 'open')::int, (evm.type = 'click')::int, 0, 0, null, evm.at
      from evm
      where evm.type in ('open', 'click')
        and not exists (select 1 from events o where o.email_id = evm.email_id and o.type = evm.type and (o.tx, o.id) < (evm.tx, evm.id))
      union all
      select evm.day, evm.sender_domain, evm.stream, evm.tags, ${domainOf(sql, "evm.data->>'recipient'")}, ${zero('unsubscribed')},
        null, evm.at
      from evm
      where evm.type = 'unsubscribe')`;
}

/** `facts` (or any relation of its columns) under one dimension: (day, key, counters...). */
function keyed(sql: Db, dim: string, from: string) {
  const counters = sql.unsafe(COUNTERS.map((c) => `f.${c}`).join(', '));
  switch (dim) {
    case 'stream':
      return sql`select f.day, f.stream as key, ${counters} from ${sql.unsafe(from)} f`;
    case 'domain':
      return sql`select f.day, f.sender_domain as key, ${counters} from ${sql.unsafe(from)} f`;
    case 'recipient_domain':
      return sql`select f.day, f.rdomain as key, ${counters} from ${sql.unsafe(from)} f`;
    default:
      return sql`select f.day, t.key || '=' || t.value as key, ${counters}
        from ${sql.unsafe(from)} f cross join lateral jsonb_each_text(f.tags) t`;
  }
}

const redacted = (sql: Db, expr: string) =>
  sql`left(regexp_replace(${sql.unsafe(expr)}, ${ADDRESS_IN_REPLY}, '<address>', 'g'), ${REPLY_MAX_CHARS})`;

export function createStatsRepo(sql: Sql) {
  /**
   * Folds at most `limit` of the account's events after its mark into the rollup, and moves the mark past them,
   * in one transaction; answers how many events it read (0: caught up, or another process is folding it now).
   */
  async function foldAccount(accountId: string, limit = FOLD_BATCH): Promise<number> {
    return sql.begin(async (tx) => {
      await tx`insert into stats_fold_marks (account_id, tx, id) values (${accountId}, '0', '') on conflict do nothing`;
      // Another process folding this account holds the row: it will take these events.
      const [mark] = await tx<Mark[]>`
        select tx::text as tx, id from stats_fold_marks where account_id = ${accountId} for update skip locked`;
      if (!mark) return 0;
      const sums = sql.unsafe(FOLDED.map((c) => `sum(${c})`).join(', '));
      const set = sql.unsafe(FOLDED.map((c) => `${c} = stats_rollup.${c} + excluded.${c}`).join(', '));
      const [row] = await tx<{ n: number }[]>`
        with ev as (
          select e.id, e.tx, e.type, e.data, e.email_id, e.created_at
          from events e
          -- The mark as values, not a join: the planner then sees how few rows follow it and takes the index.
          where e.account_id = ${accountId} and (e.tx, e.id) > (${mark.tx}::xid8, ${mark.id})
            and e.tx < pg_snapshot_xmin(pg_current_snapshot())
          order by e.tx, e.id
          limit ${limit}),
        ${facts(tx)},
        dims as (
          select 'stream' as dim, * from (${keyed(tx, 'stream', 'facts')}) s
          union all select 'domain', * from (${keyed(tx, 'domain', 'facts')}) d
          union all select 'recipient_domain', * from (${keyed(tx, 'recipient_domain', 'facts')}) r
          union all select 'tag', * from (${keyed(tx, 'tag', 'facts')}) t),
        added as (
          insert into stats_rollup (account_id, dim, day, key, ${sql.unsafe(FOLDED.join(', '))})
          select ${accountId}, dim, day, key, ${sums} from dims group by dim, day, key
          on conflict (account_id, dim, day, key) do update set ${set}
          returning 1),
        replies as (
          insert into stats_replies (account_id, recipient_domain, reply, last_at)
          select ${accountId}, rdomain, reply, max(at) from (
            select rdomain, ${redacted(tx, 'reply')} as reply, at from facts where coalesce(reply, '') <> '') r
          group by rdomain, reply
          on conflict (account_id, recipient_domain, reply) do update
            set last_at = greatest(stats_replies.last_at, excluded.last_at)
          returning 1),
        last as (select tx, id from ev order by tx desc, id desc limit 1),
        moved as (
          update stats_fold_marks k set tx = last.tx, id = last.id, folded_at = now() from last
          where k.account_id = ${accountId} returning 1)
        select (select count(*) from ev)::int as n, (select count(*) from added) as a, (select count(*) from moved) as m`;
      // Only the newest replies of each domain are shown: the rest would only grow the table.
      await tx`
        delete from stats_replies r using (
          select recipient_domain, reply,
            row_number() over (partition by recipient_domain order by last_at desc, reply) as n
          from stats_replies where account_id = ${accountId}) x
        where r.account_id = ${accountId} and r.recipient_domain = x.recipient_domain and r.reply = x.reply
          and x.n > ${REPLIES_KEPT}`;
      return row?.n ?? 0;
    });
  }

  return {
    foldAccount,

    /**
     * The accounts with events after their mark that a fold could take now: each account's first event after its
     * mark, by the feed index (ordered, one row), and whether its transaction is older than every one still open
     * (later events' are not older either). A plain `exists` scanned the whole table when nothing followed.
     */
    async accountsBehind(): Promise<string[]> {
      const rows = await sql<{ id: string }[]>`
        select a.id from accounts a
        left join stats_fold_marks k on k.account_id = a.id
        cross join lateral (
          select e.tx from events e
          where e.account_id = a.id and (e.tx, e.id) > (coalesce(k.tx, '0'), coalesce(k.id, ''))
          order by e.tx, e.id
          limit 1) n
        where n.tx < pg_snapshot_xmin(pg_current_snapshot())`;
      return rows.map((r) => r.id);
    },

    /**
     * The account's stats of emails accepted from `fromDay` through `toDay` (UTC), grouped: the rollup plus the
     * events not folded yet plus the emails still pending, in one statement. Rows in key order; a day with no
     * mail has no row (the service fills them in).
     */
    async query(q: StatsQuery): Promise<StatsRow[]> {
      const dim = DIMENSION[q.groupBy];
      // Ids are made from the clock when an email is accepted, created_at by the database a moment later: the id
      // range (an index's) is an hour wider each side, and the day of created_at decides.
      const fromId = idAt('email', new Date(Date.parse(`${q.fromDay}T00:00:00Z`) - HOUR_MS));
      const toId = idAt('email', new Date(Date.parse(`${q.toDay}T00:00:00Z`) + DAY_MS + HOUR_MS));
      const rollupKey = q.groupBy === 'day' ? sql`to_char(r.day, 'YYYY-MM-DD')` : sql`r.key`;
      const liveKey = q.groupBy === 'day' ? sql`to_char(x.day, 'YYYY-MM-DD')` : sql`x.key`;
      const folded = sql.unsafe(FOLDED.map((c) => `r.${c}`).join(', '));
      const sums = sql.unsafe(COUNTERS.map((c) => `least(sum(${c}), ${INT_MAX})::int as ${c}`).join(', '));
      const withReplies = q.groupBy === 'recipient_domain';
      // The mark is read first and given to the sums as values (the planner then takes the feed index for the
      // tail); the sums' statement reads it again in its own snapshot, and when a fold moved it in between (the
      // rollup would then hold events the tail counts too) the pair is read again.
      const read = async (tx: Db) => {
        const [mark = { tx: '0', id: '' }] = await tx<Mark[]>`
          select tx::text as tx, id from stats_fold_marks where account_id = ${q.accountId}`;
        const rows = await tx<(StatsRow & { sample_replies: string[] | null; mark_now: string | null })[]>`
        with ev as (
          select e.id, e.tx, e.type, e.data, e.email_id, e.created_at
          from events e
          where e.account_id = ${q.accountId} and (e.tx, e.id) > (${mark.tx}::xid8, ${mark.id})
            and e.email_id >= ${fromId} and e.email_id < ${toId}),
        ${facts(sql)},
        pending as (
          select (m.created_at at time zone 'utc')::date as day, m.sender_domain, m.stream, m.tags, m.last_error,
            m.to_addresses || m.cc_addresses || m.bcc_addresses as rcpts, m.remaining_recipients,
            exists (select 1 from events s where s.email_id = m.id and s.type = 'send') as sent
          from emails m
          where m.account_id = ${q.accountId} and m.status = 'pending' and m.id >= ${fromId} and m.id < ${toId}
            and (m.created_at at time zone 'utc')::date between ${q.fromDay} and ${q.toDay}),
        live as (
          select f.day, f.sender_domain, f.stream, f.tags, f.rdomain, f.accepted, f.delivered, f.bounced, f.complained,
            f.opened, f.clicked, f.unsubscribed, f.deferred, f.reply, f.at
          from facts f where f.day between ${q.fromDay} and ${q.toDay}
          union all
          select p.day, p.sender_domain, p.stream, p.tags, ${domainOf(sql, 'u.r')}, 1, 0, 0, 0, 0, 0, 0, 0, null, null
          from pending p cross join lateral (select distinct lower(x) as r from unnest(p.rcpts) x) u
          where not p.sent
          union all
          -- Deferred: waiting for a retry after a temporary failure; the reply is that failure's.
          select p.day, p.sender_domain, p.stream, p.tags, ${domainOf(sql, 'u.r')}, 0, 0, 0, 0, 0, 0, 0, 1, p.last_error, null
          from pending p cross join lateral (select distinct lower(x) as r from unnest(coalesce(p.remaining_recipients, p.rcpts)) x) u
          where p.last_error is not null),
        summed as (
          select ${rollupKey} as key, ${folded}, 0 as deferred
          from stats_rollup r
          where r.account_id = ${q.accountId} and r.dim = ${dim} and r.day between ${q.fromDay} and ${q.toDay}
          union all
          select ${liveKey}, x.accepted, x.delivered, x.bounced, x.complained, x.opened, x.clicked, x.unsubscribed, x.deferred
          from (${keyed(sql, dim, 'live')}) x),
        replies as (
          select key, array_agg(reply order by at desc, reply) as sample_replies from (
            select key, reply, at, row_number() over (partition by key order by at desc, reply) as n from (
              select key, reply, max(at) as at from (
                -- Replies since the range began (the newest of each domain are kept, whatever email they were to).
                select s.recipient_domain as key, s.reply, s.last_at as at from stats_replies s
                where ${withReplies} and s.account_id = ${q.accountId} and s.last_at >= ${q.fromDay}::timestamp at time zone 'utc'
                union all
                select l.rdomain, ${redacted(tx, 'l.reply')}, coalesce(l.at, now()) from live l
                where ${withReplies} and coalesce(l.reply, '') <> '') a
              group by key, reply) b) c
          where n <= ${REPLIES_SHOWN}
          group by key),
        totals as (select key, ${sums} from summed group by key)
        select t.*, r.sample_replies,
          (select tx::text || ' ' || id from stats_fold_marks where account_id = ${q.accountId}) as mark_now
        from totals t left join replies r on r.key = t.key
        order by t.key`;
        const held = rows.every((r) => (r.mark_now ?? '0 ') === `${mark.tx} ${mark.id}`);
        return { rows, held };
      };
      let answer = await read(sql);
      for (let attempt = 1; !answer.held && attempt < 3; attempt += 1) answer = await read(sql);
      // Folds keep moving it: one snapshot for both, at the cost of a transaction's round trips.
      if (!answer.held) answer = await sql.begin('isolation level repeatable read read only', read);
      const rows = answer.rows;
      return rows.map((r) => ({
        key: r.key,
        accepted: r.accepted,
        delivered: r.delivered,
        deferred: r.deferred,
        bounced: r.bounced,
        complained: r.complained,
        opened: r.opened,
        clicked: r.clicked,
        unsubscribed: r.unsubscribed,
        sampleReplies: r.sample_replies ?? [],
      }));
    },
  };
}
export type StatsRepo = ReturnType<typeof createStatsRepo>;
