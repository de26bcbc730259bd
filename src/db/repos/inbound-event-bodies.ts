import { withInboundBodies, type StoredInboundEventData } from '../../domain/inbound-json.js';
import type { Sql, Tx } from '../sql.js';

/**
 * An `inbound` event is stored without the bodies of its inbound email (domain/inbound-json.ts,
 * storedInboundEventData): a statement that reads events as `e` joins them back from the row with these.
 */

/** The columns the join adds; all null for an event other than `inbound` (absent where a statement has no join). */
export type InboundBodiesRaw = {
  i_id: string | null;
  i_text: string | null;
  i_html: string | null;
  i_stripped: string | null;
};

export const inboundBodyColumns = (sql: Sql | Tx) =>
  sql`i.id as i_id, i.text_body as i_text, i.html_body as i_html, i.stripped_text as i_stripped`;

export const inboundBodiesJoin = (sql: Sql | Tx) =>
  sql`left join inbound_emails i on i.id = e.inbound_id and e.type = 'inbound'`;

/** The event's data as delivered and listed: an `inbound` event's with its email's bodies, any other as stored. */
export function eventData(data: Record<string, unknown>, raw: Partial<InboundBodiesRaw>): Record<string, unknown> {
  if (raw.i_id === null || raw.i_id === undefined) return data;
  return withInboundBodies(data as StoredInboundEventData, {
    text: raw.i_text ?? '',
    html: raw.i_html ?? '',
    strippedText: raw.i_stripped ?? '',
  });
}
