import type { Sql } from '../sql.js';

/**
 * The scheduled emails still waiting in [from, to), in the order they fall due, at most `limit`, each with
 * the bytes of the drafts before it (`bytes_before`): the firing (scheduled-repo.ts) and the building ahead
 * (scheduled-upcoming.ts) read drafts into this process, and cap what one read costs by those bytes.
 * `dueOnly` keeps those whose time has come on the database's clock; `withoutAttachments` leaves out those
 * with files.
 */
export function waitingScheduled(
  sql: Sql,
  q: { from: Date; to: Date; limit: number; dueOnly?: boolean; withoutAttachments?: boolean },
) {
  return sql`
    select id, account_id, api_key_id, draft, scheduled_at,
      sum((draft->>'size')::bigint) over (order by scheduled_at, id) - (draft->>'size')::bigint as bytes_before
    from scheduled_emails s
    where status = 'enqueued' and scheduled_at >= ${q.from} and scheduled_at < ${q.to}
      ${q.dueOnly ? sql`and scheduled_at <= now()` : sql``}
      ${q.withoutAttachments ? sql`and not exists (select 1 from attachments f where f.owner_id = s.id)` : sql``}
    order by scheduled_at, id limit ${q.limit}`;
}
