import type { Sql } from '../sql.js';
import type { Reservation } from '../../domain/entities/idempotency.js';

/**
 * Idempotency-Key records. A key is reserved before the work and completed in the same transaction as the
 * work (emails-repo `accept`), so an answered request is replayed exactly; a reservation abandoned by a
 * crashed request is taken over after `staleSeconds`.
 */
export function createIdempotencyRepo(sql: Sql) {
  return {
    async reserve(a: {
      accountId: string;
      key: string;
      operation: string;
      requestHash: Buffer;
      ttlHours: number;
      staleSeconds: number;
    }): Promise<Reservation> {
      const taken = await sql`
        insert into idempotency_keys (account_id, key, operation, request_hash)
        values (${a.accountId}, ${a.key}, ${a.operation}, ${a.requestHash})
        on conflict (account_id, key) do update set
          operation = excluded.operation, request_hash = excluded.request_hash, response = null, created_at = now()
        where idempotency_keys.created_at < now() - make_interval(hours => ${a.ttlHours})
           or (idempotency_keys.response is null and idempotency_keys.created_at < now() - make_interval(secs => ${a.staleSeconds}))
        returning 1`;
      if (taken.length > 0) return { state: 'reserved' };
      const [row] = await sql<{ operation: string; request_hash: Buffer; response: unknown }[]>`
        select operation, request_hash, response from idempotency_keys where account_id = ${a.accountId} and key = ${a.key}`;
      // Deleted in between (an abandoned reservation released): try once more.
      if (!row) return this.reserve(a);
      return row.response === null
        ? { state: 'in_progress', operation: row.operation, requestHash: row.request_hash }
        : { state: 'replay', operation: row.operation, requestHash: row.request_hash, response: row.response };
    },

    /** Frees a reservation whose request failed, so that a retry with the same key is answered afresh. */
    async release(accountId: string, key: string): Promise<void> {
      await sql`delete from idempotency_keys where account_id = ${accountId} and key = ${key} and response is null`;
    },

    async purgeExpired(ttlHours: number): Promise<number> {
      const rows =
        await sql`delete from idempotency_keys where created_at < now() - make_interval(hours => ${ttlHours}) returning 1`;
      return rows.length;
    },
  };
}
export type IdempotencyRepo = ReturnType<typeof createIdempotencyRepo>;
