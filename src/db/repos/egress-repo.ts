import type { EgressReplyRecord, EgressSiteState } from '../../domain/entities/egress.js';
import { jsonb, type Sql } from '../sql.js';

/** A row of egress_sites as the driver reads it (jsonb parsed, timestamptz as Date). */
interface SiteRow {
  site: string;
  throttle_rate: string | null;
  throttled_until: Date | null;
  suspended_until: Date | null;
  suspended_sources: { address: string; until: string }[] | null;
  last_replies: EgressReplyRecord[] | null;
  connections: number;
  attempts_last_minute: number;
  updated_at: Date;
}

function toState(r: SiteRow): EgressSiteState {
  return {
    site: r.site,
    throttleRate: r.throttle_rate,
    throttledUntil: r.throttled_until,
    suspendedUntil: r.suspended_until,
    suspendedSources: r.suspended_sources ?? [],
    lastReplies: r.last_replies ?? [],
    connections: r.connections,
    attemptsLastMinute: r.attempts_last_minute,
    updatedAt: r.updated_at,
  };
}

/** The live figures a worker flushes for a site: what it sees now, and the replies it kept since its last flush. */
export interface EgressSiteFigures {
  connections: number;
  attemptsLastMinute: number;
  /** Newest first; merged in front of the row's and cut to the last 10. */
  newReplies: EgressReplyRecord[];
}

/** The most replies kept per site (the admin API's "last replies"). */
export const EGRESS_LAST_REPLIES = 10;

/**
 * Egress shaping's shared state (migration 32): what every worker process honours (throttles, suspensions,
 * source suspensions per site), the live figures the admin API shows, and the warm-up budget per source
 * address per UTC day. A worker writes a decision the moment it takes it; two workers deciding at once keep
 * the later end (GREATEST of the untils), never the earlier. Lifting (the operator's DELETE) clears them all.
 */
export function createEgressRepo(sql: Sql) {
  return {
    /** Every site's row, by name. Rows of sites nobody sends to any more are kept (their history is the operator's). */
    async listSites(): Promise<EgressSiteState[]> {
      const rows = await sql<SiteRow[]>`select * from egress_sites order by site`;
      return rows.map(toState);
    },

    /** Clears the site's suspension, throttle and source suspensions; the row as it is now, or null when there is none. */
    async liftSuspension(site: string): Promise<EgressSiteState | null> {
      const [row] = await sql<SiteRow[]>`
        update egress_sites set throttle_rate = null, throttled_until = null, suspended_until = null,
          suspended_sources = '[]'::jsonb, updated_at = now()
        where site = ${site}
        returning *`;
      return row ? toState(row) : null;
    },

    /** Messages reserved per source address on a UTC day (YYYY-MM-DD). */
    async warmupUsage(day: string): Promise<Map<string, number>> {
      const rows = await sql<{ source_address: string; sent: number }[]>`
        select source_address, sent from egress_warmup_usage where day = ${day}::date`;
      return new Map(rows.map((r) => [r.source_address, r.sent]));
    },

    /** The site is suspended until `until` (or later, if another worker or an earlier rule said so). */
    async suspend(site: string, until: Date): Promise<void> {
      await sql`
        insert into egress_sites as s (site, suspended_until) values (${site}, ${until})
        on conflict (site) do update set suspended_until = greatest(s.suspended_until, excluded.suspended_until),
          updated_at = now()`;
    },

    /**
     * The site's rate is `rate` ("60/min") until `until`. Of two throttles the one ending later wins, its rate
     * with it (a rule that fires again extends its own throttle).
     */
    async throttle(site: string, rate: string, until: Date): Promise<void> {
      await sql`
        insert into egress_sites as s (site, throttle_rate, throttled_until) values (${site}, ${rate}, ${until})
        on conflict (site) do update set
          throttle_rate = case when s.throttled_until is null or s.throttled_until <= excluded.throttled_until
            then excluded.throttle_rate else s.throttle_rate end,
          throttled_until = greatest(s.throttled_until, excluded.throttled_until),
          updated_at = now()`;
    },

    /**
     * `address` sends nothing to the site until `until` (or later). Entries that ended before `now` are dropped
     * as the list is rewritten, so it holds at most one entry per source address of the pools.
     */
    async suspendSource(site: string, address: string, until: Date, now: Date): Promise<void> {
      const entry = [{ address, until: until.toISOString() }];
      await sql`
        insert into egress_sites as s (site, suspended_sources) values (${site}, ${jsonb(sql, entry)})
        on conflict (site) do update set suspended_sources = (
          select coalesce(jsonb_agg(jsonb_build_object('address', x.address, 'until', x.until) order by x.address), '[]'::jsonb)
          from (
            select e->>'address' as address,
              (array_agg(e->>'until' order by (e->>'until')::timestamptz desc))[1] as until
            from jsonb_array_elements(s.suspended_sources || excluded.suspended_sources) e
            group by e->>'address'
            having max((e->>'until')::timestamptz) > ${now}
          ) x),
          updated_at = now()`;
    },

    /** Writes a worker's live figures for a site; its new replies go in front of the row's, the last 10 kept. */
    async flush(site: string, figures: EgressSiteFigures): Promise<void> {
      const replies = figures.newReplies.slice(0, EGRESS_LAST_REPLIES);
      await sql`
        insert into egress_sites as s (site, connections, attempts_last_minute, last_replies)
        values (${site}, ${Math.max(0, figures.connections)}, ${Math.max(0, figures.attemptsLastMinute)}, ${jsonb(sql, replies)})
        on conflict (site) do update set
          connections = excluded.connections,
          attempts_last_minute = excluded.attempts_last_minute,
          last_replies = (
            select coalesce(jsonb_agg(t.e order by t.ord), '[]'::jsonb)
            from (
              select e, ord from jsonb_array_elements(excluded.last_replies || s.last_replies) with ordinality a(e, ord)
              order by ord limit ${EGRESS_LAST_REPLIES}
            ) t),
          updated_at = now()`;
    },

    /**
     * Reserves up to `want` messages of `address`'s warm-up allowance for `day` (YYYY-MM-DD, UTC): the number
     * granted (0 when the day's allowance is spent). Each attempt is one conditional upsert that adds a block
     * only if the total stays within `allowance`, so however many processes reserve at once the total never
     * passes it; when another process took part of what was left, the block shrinks to what is left now.
     */
    async reserveWarmup(address: string, day: string, want: number, allowance: number): Promise<number> {
      let block = Math.min(want, allowance);
      while (block > 0) {
        const [row] = await sql<{ sent: number }[]>`
          insert into egress_warmup_usage as u (source_address, day, sent) values (${address}, ${day}::date, ${block})
          on conflict (source_address, day) do update set sent = u.sent + excluded.sent
          where u.sent + excluded.sent <= ${allowance}
          returning sent`;
        if (row) return block;
        const [current] = await sql<{ sent: number }[]>`
          select sent from egress_warmup_usage where source_address = ${address} and day = ${day}::date`;
        block = Math.min(want, allowance - (current?.sent ?? 0));
      }
      return 0;
    },
  };
}
export type EgressRepo = ReturnType<typeof createEgressRepo>;
