/**
 * Webhook fan-out (0003, 0009) per statement instead of per event. The row trigger ran its plpgsql function
 * and an INSERT ... SELECT for every event: a delivery outcome records two (send, delivery), so a group of
 * outcomes paid two function calls and two statements an email, most of them inserting nothing (an account
 * without webhooks). A statement-level trigger joins all the statement's new events to the webhooks at once.
 * It costs the outcome statement less database CPU per email (docs/benchmark.md, "Figures behind the code's
 * choices"). What it queues is unchanged: the same rows with the same deterministic ids, in
 * the same transaction, and the disabled webhook's events discarded at once.
 */
export const sql = /* sql */ `
CREATE FUNCTION queue_events_for_webhooks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_deliveries (id, webhook_id, event_id, account_id, status, completed_at, discard_reason)
  SELECT 'whd_' || substr(e.id, 5) || substr(w.id, 4), w.id, e.id, e.account_id,
    CASE WHEN w.disabled_at IS NULL THEN 'pending' ELSE 'discarded' END,
    CASE WHEN w.disabled_at IS NULL THEN NULL ELSE now() END,
    CASE WHEN w.disabled_at IS NULL THEN NULL ELSE 'webhook_disabled' END
  FROM added e
  JOIN webhooks w ON w.account_id = e.account_id AND w.deleted_at IS NULL AND e.type = ANY (w.events)
  ON CONFLICT (id) DO NOTHING;
  IF FOUND THEN
    PERFORM pg_notify('mailer_webhook_queue', '');
  END IF;
  RETURN NULL;
END $$;

DROP TRIGGER events_queue_webhooks ON events;
DROP FUNCTION queue_event_for_webhooks();
CREATE TRIGGER events_queue_webhooks AFTER INSERT ON events REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION queue_events_for_webhooks();
`;
