import type { ConsoleSessionRow } from '../../domain/entities/console-sessions.js';
import type { Sql } from '../sql.js';

/**
 * Console sessions (migration 30): only the SHA-256 of the cookie's token is stored, so a copy of the table
 * signs no one in. A session acting as a key reads that key's stored hash, so that each request is judged by
 * the same principal lookup as a request carrying the key (a deleted key's sessions find no principal).
 */
export function createConsoleSessionsRepo(sql: Sql) {
  return {
    async create(s: { tokenHash: Buffer; apiKeyId: string | null; csrfToken: string; expiresAt: Date }): Promise<void> {
      await sql`
        insert into console_sessions (token_hash, api_key_id, csrf_token, expires_at)
        values (${s.tokenHash}, ${s.apiKeyId}, ${s.csrfToken}, ${s.expiresAt})`;
    },

    /**
     * The session of a cookie's token unless it has expired: an account session stored under `keyed` (the token's
     * SHA-256), the operator's under `operator` (the token's HMAC under the admin token, so that a new admin token
     * ends every operator session made with the old one).
     */
    async find(keyed: Buffer, operator: Buffer): Promise<ConsoleSessionRow | undefined> {
      const [row] = await sql<
        { api_key_id: string | null; key_hash: Buffer | null; csrf_token: string; expires_at: Date }[]
      >`
        select s.api_key_id, k.key_hash, s.csrf_token, s.expires_at
        from console_sessions s left join api_keys k on k.id = s.api_key_id
        where s.expires_at > now()
          and ((s.token_hash = ${keyed} and s.api_key_id is not null) or (s.token_hash = ${operator} and s.api_key_id is null))`;
      return (
        row && {
          apiKeyId: row.api_key_id,
          keyHash: row.key_hash,
          csrfToken: row.csrf_token,
          expiresAt: row.expires_at,
        }
      );
    },

    async delete(keyed: Buffer, operator: Buffer): Promise<void> {
      await sql`delete from console_sessions where token_hash in (${keyed}, ${operator})`;
    },

    /** Drops sessions that have ended (run at each sign-in: the table holds at most a few per operator and key). */
    async purgeExpired(): Promise<number> {
      const rows = await sql`delete from console_sessions where expires_at <= now() returning 1`;
      return rows.length;
    },
  };
}
export type ConsoleSessionsRepo = ReturnType<typeof createConsoleSessionsRepo>;
