import type postgres from 'postgres';
import type { Sql, Tx } from '../sql.js';

/**
 * What removing inbound emails deleted: the emails, their stored chunks, their events and those events' deliveries;
 * `skipped`: candidates left (a delivery of theirs pending, or locked elsewhere).
 */
export interface InboundRemoval {
  inboundEmails: number;
  blobChunks: number;
  events: number;
  webhookDeliveries: number;
  webhookAttempts: number;
  skipped: number;
}

/** No inbound email pending a webhook delivery (`i` the inbound_emails row): a dispatcher may be posting its event. */
export const noPendingDelivery = (sql: Sql | Tx) => sql`not exists (
  select 1 from events e join webhook_deliveries d on d.event_id = e.id
  where e.inbound_id = i.id and d.status = 'pending')`;

/**
 * An inbound email is content through and through (the message a stranger sent), so it is removed whole, never
 * rewritten: its row, its bytes (the raw message and each attachment, by the keys the row names), its `inbound`
 * event, and that event's webhook deliveries with their attempts, in one statement (the references are checked
 * at its end, so the order of the parts does not matter). `candidates` selects the `id`s to consider (locked,
 * skipping rows locked elsewhere); one whose event still has a pending delivery is left for a later run (a
 * dispatcher may be posting it). `reply` events stay: they are events of the email answered, under its rules.
 */
export async function removeInbound(
  sql: Sql | Tx,
  candidates: postgres.PendingQuery<postgres.Row[]>,
): Promise<InboundRemoval> {
  const [row] = await sql<InboundRemoval[]>`
    with considered as (${candidates}),
    batch as (
      select i.id, i.raw_key, i.attachments from inbound_emails i
      where i.id in (select id from considered) and ${noPendingDelivery(sql)}
      for update of i skip locked),
    ev as (select id from events where inbound_id in (select id from batch)),
    attempts as (
      delete from webhook_attempts a using webhook_deliveries d
      where a.delivery_id = d.id and d.event_id in (select id from ev) returning 1),
    deliveries as (delete from webhook_deliveries where event_id in (select id from ev) returning 1),
    events as (delete from events where id in (select id from ev) returning 1),
    blobs as (
      delete from inbound_blobs where key in (
        select raw_key from batch
        union all select a->>'key' from batch, jsonb_array_elements(batch.attachments) a)
      returning 1),
    gone as (delete from inbound_emails where id in (select id from batch) returning 1)
    select (select count(*) from gone)::int as "inboundEmails", (select count(*) from blobs)::int as "blobChunks",
      (select count(*) from events)::int as events, (select count(*) from deliveries)::int as "webhookDeliveries",
      (select count(*) from attempts)::int as "webhookAttempts",
      (select count(*) from considered)::int - (select count(*) from gone)::int as skipped`;
  return row!;
}
