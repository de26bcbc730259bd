import type { Sql } from '../sql.js';

/** The tables an accepted request's rows are written to, keyed by the ids made before the write. */
export type AcceptedTable = 'emails' | 'scheduled_emails';

/** How long the probe waits for writers still at work on the table before trying again (acceptance.ts retries). */
const LOCK_TIMEOUT = '2s';

/**
 * Finds out whether a write whose answer was lost committed (acceptance.ts): how many of `ids` are in
 * `table`. The statement that wrote them may still be running on the server when the client has lost its
 * connection (PostgreSQL finishes a statement before it notices the client is gone), so a plain read could
 * answer "not there" just before that commit lands. A SHARE lock on the table waits for every transaction
 * writing it to end (it conflicts with their ROW EXCLUSIVE lock), and the read after it sees whatever they
 * committed. The lock is held only for that read, and only when an answer was lost: new writes wait for it
 * a few milliseconds.
 */
export function createCommitProbe(sql: Sql) {
  return {
    async storedCount(table: AcceptedTable, ids: string[]): Promise<number> {
      const rows = await sql.begin(async (tx) => {
        await tx.unsafe(`set local lock_timeout = '${LOCK_TIMEOUT}'`);
        await tx.unsafe(`lock table ${table === 'emails' ? 'emails' : 'scheduled_emails'} in share mode`);
        return tx<{ n: number }[]>`select count(*)::int as n from ${tx(table)} where id = any(${ids})`;
      });
      return rows[0]!.n;
    },
  };
}
export type CommitProbe = ReturnType<typeof createCommitProbe>;
