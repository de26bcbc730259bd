/**
 * Webhooks a receiver can trust (issue 14): secret rotation with an overlap, auto-disable of an endpoint
 * that keeps failing, and the reason a delivery was discarded.
 *
 * - `previous_secret` still signs every request until `previous_secret_until` (the rotation's overlap).
 * - `consecutive_discards` and `failing_since` count the deliveries discarded in a row since the last success;
 *   past the threshold (config: webhookDisable*) the webhook gets `disabled_at` and `disabled_reason`.
 * - The fan-out trigger records the events of a disabled webhook as discarded at once (reason
 *   `webhook_disabled`), so nothing is attempted and an operator can send them again once it is enabled.
 */
export const sql = /* sql */ `
ALTER TABLE webhooks
  ADD COLUMN previous_secret text,
  ADD COLUMN previous_secret_until timestamptz,
  ADD COLUMN consecutive_discards integer NOT NULL DEFAULT 0,
  ADD COLUMN failing_since timestamptz,
  ADD COLUMN disabled_at timestamptz,
  ADD COLUMN disabled_reason text;

-- retries_exhausted | webhook_disabled | webhook_deleted; NULL unless discarded.
ALTER TABLE webhook_deliveries ADD COLUMN discard_reason text;
CREATE INDEX webhook_deliveries_discarded ON webhook_deliveries (webhook_id, created_at) WHERE status = 'discarded';

CREATE OR REPLACE FUNCTION queue_event_for_webhooks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_deliveries (id, webhook_id, event_id, account_id, status, completed_at, discard_reason)
  SELECT 'whd_' || substr(NEW.id, 5) || substr(w.id, 4), w.id, NEW.id, NEW.account_id,
    CASE WHEN w.disabled_at IS NULL THEN 'pending' ELSE 'discarded' END,
    CASE WHEN w.disabled_at IS NULL THEN NULL ELSE now() END,
    CASE WHEN w.disabled_at IS NULL THEN NULL ELSE 'webhook_disabled' END
  FROM webhooks w
  WHERE w.account_id = NEW.account_id AND w.deleted_at IS NULL AND NEW.type = ANY (w.events)
  ON CONFLICT (id) DO NOTHING;
  IF FOUND THEN
    PERFORM pg_notify('mailer_webhook_queue', '');
  END IF;
  RETURN NULL;
END $$;
`;
