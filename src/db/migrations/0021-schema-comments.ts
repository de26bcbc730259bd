/**
 * The why of the behaviour that lives in the database, kept on the objects themselves (COMMENT ON), so that
 * src/db/schema.sql, generated from a migrated database, carries it beside the code it explains. Comments
 * only: nothing a query or trigger does changes.
 */
export const sql = /* sql */ `
COMMENT ON TABLE list_counts IS
  'Exact totals of each account''s lists (emails, scheduled, batch) per status and job type, for GET /emails and the others to answer total without counting rows. Kept by the *_counted_* triggers inside the writing transaction, spread over up to 1024 slots per key so that concurrent writers rarely wait on one row; a total is the sum of its slots (db/repos/list-counts.ts).';
COMMENT ON FUNCTION list_counts_bump(text, text, text, text, bigint) IS
  'Adds d to one slot of a list_counts key: a free slot taken with SKIP LOCKED, else a new random one. The two-statement form is deliberate: UPDATE ... FROM (SELECT ... FOR UPDATE SKIP LOCKED) can apply a delta twice when a concurrent update forces a recheck.';
COMMENT ON FUNCTION list_counts_add_emails() IS
  'emails_counted_in: inserted emails, counted per statement (one bump per account, status and job type, not per row).';
COMMENT ON FUNCTION list_counts_move_emails() IS
  'emails_counted_move: an UPDATE statement''s net change of emails per account, status and job type (new rows counted in, old rows out).';
COMMENT ON FUNCTION list_counts_remove_emails() IS
  'emails_counted_out: deleted emails (retention, erasure, tests) leave the counts per statement.';
COMMENT ON FUNCTION list_counts_add_owned() IS
  'The *_counted_in triggers of scheduled_emails and batch_jobs (TG_ARGV[0] names the list).';
COMMENT ON FUNCTION list_counts_move_owned() IS
  'The *_counted_move triggers of scheduled_emails and batch_jobs: a row whose status or account changed moves between counts.';
COMMENT ON FUNCTION list_counts_remove_owned() IS
  'The *_counted_out triggers of scheduled_emails and batch_jobs.';
COMMENT ON FUNCTION list_counts_truncated() IS
  'A TRUNCATE of a counted table empties its list''s counts (tests truncate; the service never does).';
COMMENT ON TABLE webhook_deliveries IS
  'One row per (event, webhook) to deliver: written by the events_queue_webhooks trigger in the transaction that records the event, so an event and its deliveries commit together; the worker''s webhook dispatcher (webhooks/webhook-dispatcher.ts) claims pending rows, woken by NOTIFY mailer_webhook_queue.';
COMMENT ON FUNCTION queue_events_for_webhooks() IS
  'Webhook fan-out (events_queue_webhooks): each inserted event gets a delivery per live webhook of its account subscribed to its type, pending, or discarded at once when the webhook is disabled; ids derive from event and webhook, so a replayed insert adds nothing. NOTIFY wakes the dispatcher only when rows were added.';
`;
