/**
 * Events and what hangs off them: webhook deliveries with one row per attempt, per-account suppressions,
 * the account health policy's memory, and service-wide settings (the tracking link key).
 *
 * Fan-out is a trigger on `events`: whatever records an event (the delivery activity, the inbound feedback
 * listener, the tracking endpoints) queues it for every subscribed webhook in the same transaction, so no
 * code path can record an event and forget its webhooks, and none can queue a webhook for an event that
 * was rolled back.
 */
export const sql = /* sql */ `
-- One row per (event, webhook): its id is stable across retries (X-Mail-Delivery-Id) and deterministic, so
-- a repeated fan-out cannot queue the same event twice. group_id is the delivery workflow that owns it.
CREATE TABLE webhook_deliveries (
  id text PRIMARY KEY,
  webhook_id text NOT NULL REFERENCES webhooks (id),
  event_id text NOT NULL REFERENCES events (id),
  account_id text NOT NULL REFERENCES accounts (id),
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'discarded')),
  attempt_count integer NOT NULL DEFAULT 0,
  group_id text,
  claimed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz
);
CREATE INDEX webhook_deliveries_unclaimed ON webhook_deliveries (created_at) WHERE group_id IS NULL AND status = 'pending';
CREATE INDEX webhook_deliveries_claimed ON webhook_deliveries (claimed_at) WHERE group_id IS NOT NULL AND status = 'pending';
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, id);

CREATE TABLE webhook_attempts (
  delivery_id text NOT NULL REFERENCES webhook_deliveries (id),
  attempt integer NOT NULL,
  started_at timestamptz NOT NULL,
  -- 0 when no HTTP answer came (time-out, network error, refused address).
  status_code integer NOT NULL,
  latency_ms integer NOT NULL,
  response_excerpt text NOT NULL DEFAULT '',
  error text NOT NULL DEFAULT '',
  PRIMARY KEY (delivery_id, attempt)
);

CREATE FUNCTION queue_event_for_webhooks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_deliveries (id, webhook_id, event_id, account_id)
  SELECT 'whd_' || substr(NEW.id, 5) || substr(w.id, 4), w.id, NEW.id, NEW.account_id
  FROM webhooks w
  WHERE w.account_id = NEW.account_id AND w.deleted_at IS NULL AND NEW.type = ANY (w.events)
  ON CONFLICT (id) DO NOTHING;
  IF FOUND THEN
    PERFORM pg_notify('mailer_webhook_queue', '');
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER events_queue_webhooks AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION queue_event_for_webhooks();

-- Addresses (lower case) an account no longer sends to: a hard bounce or a complaint put them here.
CREATE TABLE suppressions (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  address text NOT NULL,
  reason text NOT NULL CHECK (reason IN ('bounce', 'complaint')),
  email_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (account_id, address)
);

-- The quota an account had before the health policy reduced it, restored when it is healthy again.
ALTER TABLE accounts ADD COLUMN quota_before_review integer;

-- Reports mailed back (ARF, DSN) name the original Message-ID.
CREATE INDEX emails_header_message_id ON emails (header_message_id);

CREATE TABLE settings (
  name text PRIMARY KEY,
  value text NOT NULL
);
`;
