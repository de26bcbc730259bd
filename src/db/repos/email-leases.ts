import type { Sql } from '../sql.js';

/**
 * The leases by which one delivery attempt at a time owns an email (migration 0001: lease_token, lease_until).
 * A lease outlives a killed worker by at most its duration; the retry then takes the email over. By primary
 * key, with a pending test no index can serve: see email-deliveries-repo.ts.
 */
export function createEmailLeases(sql: Sql) {
  return {
    /**
     * Leases the still-pending emails among `ids` to `token`. Answers those leased now and those another
     * live attempt still holds (with when its lease ends). One statement: the main query reads the rows as
     * they were before the update, so a pending email this update did not take although its lease had run out
     * there was leased by a concurrent attempt meanwhile: it counts as busy until now, and the caller looks
     * again (after its shortest wait) instead of taking it for settled.
     */
    async lease(ids: string[], token: string, seconds: number): Promise<{ leased: string[]; busyUntil: Date | null }> {
      const [row] = await sql<{ leased: string[]; until: Date | null }[]>`
        with taken as (
          update emails set lease_token = ${token}, lease_until = now() + make_interval(secs => ${seconds}), attempts = attempts + 1
          where id = any(${ids}) and status is not distinct from 'pending' and (lease_until is null or lease_until < now())
          returning id)
        select coalesce((select array_agg(id) from taken), '{}') as leased,
          (select max(greatest(coalesce(m.lease_until, now()), now())) from emails m
           where m.id = any(${ids}) and m.status is not distinct from 'pending' and m.lease_token is distinct from ${token}
             and m.id not in (select id from taken)) as until`;
      return { leased: row?.leased ?? [], busyUntil: row?.until ?? null };
    },

    /**
     * Extends to `seconds` from now the leases `token` holds among `ids` that have less than `belowSeconds`
     * left: a lease taken moments ago is not rewritten (each renewal is a new row version and an entry in
     * every index). By id, through the primary key: `lease_token` has no index (one would cost every lease
     * and outcome a write), so renewing by token alone scanned the whole table every few seconds per attempt
     * (docs/benchmark.md, "Figures behind the code's choices").
     */
    async renewLeases(
      ids: string[],
      token: string,
      { seconds, belowSeconds }: { seconds: number; belowSeconds: number },
    ): Promise<void> {
      await sql`
        update emails set lease_until = now() + make_interval(secs => ${seconds})
        where id = any(${ids}) and lease_token = ${token} and status is not distinct from 'pending'
          and lease_until < now() + make_interval(secs => ${belowSeconds})`;
    },

    /** A temporary failure: the email stays pending and free for the next attempt. */
    async release(token: string, id: string, error: string): Promise<void> {
      await sql`
        update emails set last_error = ${error}, lease_token = null, lease_until = null
        where id = ${id} and lease_token = ${token} and status = 'pending'`;
    },
  };
}
