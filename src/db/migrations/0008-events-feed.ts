/**
 * The events API reads an account's events with a cursor, and a cursor is only safe if no event can later
 * appear behind it. Event ids are time-ordered but made by the application before its transaction commits,
 * so two writers can commit out of id order: a reader past `evt_B` would never see an `evt_A < evt_B` that
 * committed a moment later. A sequence has the same flaw (values are taken before the commit).
 *
 * `tx` is the writing transaction's id (xid8, 64-bit, never wraps). Every transaction whose id is below the
 * reader's snapshot xmin has ended, so the feed returns only rows with `tx < xmin` and orders by (tx, id): no
 * row can ever be added before a position already read. An event is held back only while an older writing
 * transaction is still open (normally milliseconds). Rows already stored get this migration's id, in id order.
 */
export const sql = /* sql */ `
ALTER TABLE events ADD COLUMN tx xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX events_account_feed ON events (account_id, tx, id);
CREATE INDEX events_account_type_feed ON events (account_id, type, tx, id);
`;
