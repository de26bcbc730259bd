import type { EmailStatus, EventType, Stream } from '../../domain/catalog.js';
import type { PriorComplaints } from '../../domain/complaints.js';
import type { StreamActivity } from '../../domain/compliance.js';
import type { NewEvent, NewSuppression } from '../../domain/events.js';
import { idAt } from '../../ids.js';
import { jsonb, type Sql, type Tx } from '../sql.js';
import type { EventRow, DayCounts, HealthCounts, JudgedCounts } from '../../domain/entities/events.js';

/** Rows as one JSON parameter, expanded in SQL by `jsonb_to_recordset` (one statement for any number). */
const eventsJson = (sql: Sql | Tx, events: NewEvent[]) =>
  jsonb(
    sql,
    events.map((e) => ({ id: e.id, type: e.type, data: e.data, at: e.at.toISOString() })),
  );

/**
 * The parts of a statement that change an email (a CTE `changed` returning its id and account_id) and record,
 * with the change, the email's events and the addresses it suppresses: the change, the events, the
 * suppressions and (by the trigger) the webhook deliveries commit together or not at all.
 */
export function recordedWithChange(sql: Sql | Tx, events: NewEvent[], suppress: NewSuppression[]) {
  return sql`
    recorded as (
      insert into events (id, email_id, account_id, type, data, created_at)
      select e.id, changed.id, changed.account_id, e.type, e.data, e.at
      from changed, jsonb_to_recordset(${eventsJson(sql, events)}) as e(id text, type text, data jsonb, at timestamptz)
      returning 1),
    suppressed as (
      insert into suppressions (id, account_id, address, reason, email_id)
      select s.id, changed.account_id, s.address, s.reason, changed.id
      from changed, jsonb_to_recordset(${jsonb(sql, suppress)}) as s(id text, address text, reason text)
      on conflict (account_id, address, scope, topic) do nothing
      returning 1)`;
}

type Raw = {
  id: string;
  email_id: string;
  account_id: string;
  type: EventType;
  data: Record<string, unknown>;
  created_at: Date;
};
const toEvent = (r: Raw): EventRow => ({
  id: r.id,
  emailId: r.email_id,
  accountId: r.account_id,
  type: r.type,
  data: r.data,
  createdAt: r.created_at,
});

/** A complaint to record; `countsForHealth` false keeps it out of the health policy's counts (an untrusted source). */
type ComplaintChange = { ev: NewEvent; suppress: NewSuppression[]; countsForHealth: boolean };

async function applyComplaint(
  sql: Sql,
  emailId: string,
  decide: (prior: PriorComplaints) => ComplaintChange | undefined,
): Promise<{ accountId: string; recorded: boolean } | undefined> {
  return sql.begin(async (tx) => {
    const [email] = await tx<{ account_id: string }[]>`select account_id from emails where id = ${emailId} for update`;
    if (!email) return undefined;
    const prior = await tx<{ recipients: string[] }[]>`
      select array(select jsonb_array_elements_text(coalesce(data->'complained_recipients', '[]'::jsonb))) as recipients
      from events where email_id = ${emailId} and type = 'complaint'`;
    const change = decide({ count: prior.length, recipients: new Set(prior.flatMap((p) => p.recipients)) });
    if (!change) return { accountId: email.account_id, recorded: false };
    await tx`
      with changed as (update emails set status = 'complained' where id = ${emailId} returning id, account_id),
      ${recordedWithChange(tx, [change.ev], change.suppress)}
      select 1`;
    if (!change.countsForHealth) await tx`update events set counts_for_health = false where id = ${change.ev.id}`;
    return { accountId: email.account_id, recorded: true };
  }) as Promise<{ accountId: string; recorded: boolean } | undefined>;
}

/**
 * The account's last `days` UTC days, one row each (days without mail included). Without `stream`, `accepted` is
 * the quota used that day; with one, the emails of that stream accepted that day, and the events only theirs.
 */
async function perDay(sql: Sql, accountId: string, days: number, stream?: Stream): Promise<DayCounts[]> {
  const from = new Date(
    Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() - (days - 1)),
  );
  const ofStream = stream === undefined ? sql`` : sql`join emails m on m.id = e.email_id and m.stream = ${stream}`;
  const accepted =
    stream === undefined
      ? sql`select day, used from quota_usage where account_id = ${accountId}`
      : sql`select (created_at at time zone 'utc')::date as day, count(*) as used from emails
          where account_id = ${accountId} and id >= ${idAt('email', from)} and stream = ${stream} group by 1`;
  return sql<DayCounts[]>`
    with days as (
      select d::date as day from generate_series(${from}::date, (now() at time zone 'utc')::date, interval '1 day') d),
    counts as (
      select (e.created_at at time zone 'utc')::date as day,
        count(*) filter (where e.type = 'send') as sent,
        count(*) filter (where e.type = 'delivery') as delivered,
        count(*) filter (where e.type = 'bounce') as bounced,
        count(*) filter (where e.type = 'complaint') as complained,
        count(*) filter (where e.type = 'open') as opened,
        count(*) filter (where e.type = 'click') as clicked,
        count(*) filter (where e.type = 'unsubscribe') as unsubscribed
      from events e ${ofStream}
      where e.account_id = ${accountId} and e.id >= ${idAt('event', from)}
      group by 1),
    accepted as (${accepted})
    select to_char(days.day, 'YYYY-MM-DD') as day,
      coalesce(q.used, 0)::int as accepted,
      coalesce(c.sent, 0)::int as sent, coalesce(c.delivered, 0)::int as delivered, coalesce(c.bounced, 0)::int as bounced,
      coalesce(c.complained, 0)::int as complained, coalesce(c.opened, 0)::int as opened, coalesce(c.clicked, 0)::int as clicked,
      coalesce(c.unsubscribed, 0)::int as unsubscribed
    from days
    left join counts c on c.day = days.day
    left join accepted q on q.day = days.day
    order by days.day`;
}

/**
 * Events of emails. Recording one also queues it for the account's subscribed webhooks (a trigger, see
 * migration 0003), in the same transaction.
 */
export function createEventsRepo(sql: Sql) {
  return {
    /**
     * Feedback that arrives after delivery (a complaint, a bounce report): the event, the email's new status
     * and the suppressions, in one statement. A complaint wins over a later bounce report. Answers the
     * account, or undefined when the email does not exist.
     */
    async applyFeedback(
      emailId: string,
      status: Extract<EmailStatus, 'bounced' | 'complained'>,
      ev: NewEvent,
      suppress: NewSuppression[],
    ): Promise<{ accountId: string } | undefined> {
      const [row] = await sql<{ account_id: string }[]>`
        with changed as (
          update emails set status = case when status = 'complained' then status else ${status} end
          where id = ${emailId}
          returning id, account_id),
        ${recordedWithChange(sql, [ev], suppress)}
        select account_id from changed`;
      return row ? { accountId: row.account_id } : undefined;
    },

    /**
     * A complaint, judged against those already recorded for the email: `decide` sees them and answers
     * the event and suppressions to record, or undefined to record nothing. The email's row is locked
     * first, so two copies of one report arriving together are judged one after the other. Answers
     * undefined when the email does not exist.
     */
    applyComplaint: (emailId: string, decide: (prior: PriorComplaints) => ComplaintChange | undefined) =>
      applyComplaint(sql, emailId, decide),

    async timeline(emailId: string): Promise<EventRow[]> {
      return (await sql<Raw[]>`select * from events where email_id = ${emailId} order by created_at, id`).map(toEvent);
    },

    /** Emails accepted and events recorded per UTC day, the last `days` days, today included. */
    perDay: (accountId: string, days: number, stream?: Stream) => perDay(sql, accountId, days, stream),

    /**
     * Each stream's mail since `since` (compliance.ts): emails handed over (`send`), emails with a complaint that
     * counts (the trusted feedback loops health trusts), and `unsubscribe` events, by the email's stream.
     */
    async streamActivity(accountId: string, since: Date): Promise<Record<Stream, StreamActivity>> {
      const rows = await sql<({ stream: Stream } & StreamActivity)[]>`
        select coalesce(m.stream, 'transactional') as stream,
          count(*) filter (where e.type = 'send')::int as sent,
          count(distinct e.email_id) filter (where e.type = 'complaint' and e.counts_for_health)::int as complained,
          count(*) filter (where e.type = 'unsubscribe')::int as unsubscribed
        from events e
        left join emails m on m.id = e.email_id
        where e.account_id = ${accountId} and e.id >= ${idAt('event', since)} and e.created_at >= ${since}
          and e.type in ('send', 'complaint', 'unsubscribe')
        group by 1`;
      const of = (stream: Stream): StreamActivity => {
        const r = rows.find((x) => x.stream === stream);
        return { sent: r?.sent ?? 0, complained: r?.complained ?? 0, unsubscribed: r?.unsubscribed ?? 0 };
      };
      return { transactional: of('transactional'), broadcast: of('broadcast') };
    },

    /**
     * What the health policy judges: sends, counted bounces and complaints of the account since `since`, in all
     * and per stream (the email's; one no longer stored counts as transactional). One scan: the grouping sets
     * count the whole (stream null) and each stream apart, distinct complainants included.
     */
    async healthCounts(accountId: string, since: Date): Promise<HealthCounts> {
      const rows = await sql<
        {
          stream: Stream | null;
          sent: number;
          bounced: number;
          complained: number;
          complainants: number;
          last_issue_at: Date | null;
        }[]
      >`
        select s.stream,
          count(*) filter (where type = 'send')::int as sent,
          count(distinct email_id) filter (where type = 'bounce' and data->>'bounce_subtype' <> 'Suppressed')::int as bounced,
          count(distinct email_id) filter (where type = 'complaint' and counts_for_health)::int as complained,
          coalesce(cardinality(array_agg(distinct c.recipient) filter (where type = 'complaint' and counts_for_health and c.recipient is not null)), 0)::int as complainants,
          max(e.created_at) filter (where (type = 'bounce' and data->>'bounce_subtype' <> 'Suppressed') or (type = 'complaint' and counts_for_health)) as last_issue_at
        from events e
        left join emails m on m.id = e.email_id
        cross join lateral (select coalesce(m.stream, 'transactional') as stream) s
        left join lateral jsonb_array_elements_text(case when type = 'complaint' then data->'complained_recipients' end) as c(recipient) on true
        where e.account_id = ${accountId} and e.id >= ${idAt('event', since)} and e.created_at >= ${since}
        group by grouping sets ((), (s.stream))`;
      const counts = (stream: Stream | null): JudgedCounts => {
        const r = rows.find((x) => x.stream === stream);
        return {
          sent: r?.sent ?? 0,
          bounced: r?.bounced ?? 0,
          complained: r?.complained ?? 0,
          complainants: r?.complainants ?? 0,
        };
      };
      return {
        ...counts(null),
        lastIssueAt: rows.find((x) => x.stream === null)?.last_issue_at ?? null,
        byStream: { transactional: counts('transactional'), broadcast: counts('broadcast') },
      };
    },
  };
}
export type EventsRepo = ReturnType<typeof createEventsRepo>;
