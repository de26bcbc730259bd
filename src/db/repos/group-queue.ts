import type postgres from 'postgres';
import type { Sql } from '../sql.js';
import type { ClaimedGroup } from '../../domain/entities/delivery.js';

/**
 * The claim side of an outbox table (`group_id`, `claimed_at`) that a dispatcher drains into workflows, a
 * group per workflow. Concurrent dispatchers skip each other's rows. `waiting` narrows which rows still
 * need a workflow (a table whose entries stay after their work is done says which are not done).
 */
export function createGroupQueue(
  sql: Sql,
  q: { table: string; id: string; order: string; waiting: postgres.PendingQuery<postgres.Row[]> },
) {
  const table = sql(q.table);
  const id = sql(q.id);
  return {
    /** Takes up to `limit` unclaimed entries for a new group. */
    async claimGroup(groupId: string, limit: number): Promise<string[]> {
      const rows = await sql<{ id: string }[]>`
        update ${table} t set group_id = ${groupId}, claimed_at = now()
        from (
          select ${id} from ${table} where group_id is null and ${q.waiting}
          order by ${sql(q.order)} limit ${limit} for update skip locked
        ) c
        where t.${id} = c.${id}
        returning t.${id} as id`;
      return rows.map((r) => r.id).sort();
    },

    /** Groups claimed long ago whose workflow may never have started (a dispatcher died in between). */
    async staleGroups(olderThanSeconds: number): Promise<ClaimedGroup[]> {
      const rows = await sql<{ group_id: string; ids: string[] }[]>`
        select group_id, array_agg(${id} order by ${id}) as ids from ${table}
        where group_id is not null and ${q.waiting} and claimed_at < now() - make_interval(secs => ${olderThanSeconds})
        group by group_id limit 100`;
      return rows.map((r) => ({ groupId: r.group_id, ids: r.ids }));
    },

    /** Gives a group's entries back to the queue (its workflow could not be started). */
    async unclaimGroup(groupId: string): Promise<void> {
      await sql`update ${table} set group_id = null, claimed_at = null where group_id = ${groupId} and ${q.waiting}`;
    },

    async touchGroup(groupId: string): Promise<void> {
      await sql`update ${table} set claimed_at = now() where group_id = ${groupId} and ${q.waiting}`;
    },
  };
}
