import crypto from 'node:crypto';
import type { Sql } from '../sql.js';
import type { TrackingHit, TrackingRules, HitOutcome, TrackingCounts } from '../../domain/entities/tracking.js';

/** The pixel's window is keyed by nothing; a link's by its digest (links run to 2 KB, index keys should not). */
const targetKey = (link: string | undefined) =>
  link === undefined ? Buffer.alloc(0) : crypto.createHash('sha256').update(link).digest();

/** Counters saturate here instead of failing the statement. */
const INT_MAX = 2_147_483_647;

/**
 * Opens and clicks, repeats bounded (migration 0004). A hit is one statement that counts it and decides
 * whether it records its event: the window's upsert (`claim`) answers a row only for the hit that takes the
 * window, and the count's upsert lets it record only under the cap. Each upsert works on the latest version
 * of its row, locked, so concurrent hits are decided one after the other by PostgreSQL, in any number of
 * processes; every statement takes the window row before the count row, so they cannot deadlock.
 */
export function createTrackingRepo(sql: Sql) {
  return {
    /** Counts `count` hits of a target (1, or a batch of repeats) and records the event of `hit` if it wins. */
    async hit(hit: TrackingHit, rules: TrackingRules, count = 1): Promise<HitOutcome> {
      const { event: ev } = hit;
      const n = Math.min(count, INT_MAX);
      const [opens, clicks] = ev.type === 'open' ? [n, 0] : [0, n];
      const [row] = await sql<{ known: boolean; recorded: boolean }[]>`
        with target as (
          select id, account_id from emails where id = ${hit.emailId}),
        claim as (
          insert into tracking_windows as w (email_id, kind, target, last_event_at)
          select id, ${ev.type}::text, ${targetKey(hit.link)}::bytea, ${ev.at}::timestamptz
          from target
          on conflict (email_id, kind, target) do update set last_event_at = excluded.last_event_at
            where w.last_event_at <= excluded.last_event_at - make_interval(secs => ${rules.windowSeconds}::int)
          returning email_id),
        counted as (
          insert into tracking_counts as c (email_id, open_count, click_count, event_count, last_event_id)
          -- event_count 1 here means "this hit took its window"; the update turns it into an increment under the cap.
          select target.id, ${opens}::int, ${clicks}::int, (claim.email_id is not null)::int, case when claim.email_id is not null then ${ev.id}::text end
          from target left join claim on true
          on conflict (email_id) do update set
            open_count = least(c.open_count::bigint + excluded.open_count, ${INT_MAX}::bigint)::int,
            click_count = least(c.click_count::bigint + excluded.click_count, ${INT_MAX}::bigint)::int,
            event_count = c.event_count + case when excluded.event_count = 1 and c.event_count < ${rules.maxEventsPerEmail}::int then 1 else 0 end,
            last_event_id = case when excluded.event_count = 1 and c.event_count < ${rules.maxEventsPerEmail}::int then excluded.last_event_id else c.last_event_id end
          returning coalesce(last_event_id = ${ev.id}::text, false) as won),
        recorded as (
          insert into events (id, email_id, account_id, type, data, created_at)
          select ${ev.id}::text, target.id, target.account_id, ${ev.type}::text, ${sql.json(ev.data as never)}::jsonb, ${ev.at}::timestamptz
          from target, counted
          where counted.won
          returning 1)
        select exists (select 1 from target) as known, exists (select 1 from recorded) as recorded`;
      if (!row?.known) return 'unknown_email';
      return row.recorded ? 'recorded' : 'counted';
    },

    /** How often an email's pixel was fetched and its links followed; zeros before the first hit. */
    async counts(emailId: string): Promise<TrackingCounts> {
      const [row] = await sql<{ open_count: number; click_count: number }[]>`
        select open_count, click_count from tracking_counts where email_id = ${emailId}`;
      return { openCount: row?.open_count ?? 0, clickCount: row?.click_count ?? 0 };
    },
  };
}
export type TrackingRepo = ReturnType<typeof createTrackingRepo>;
