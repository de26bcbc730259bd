/**
 * The first schema. Ids are the service's prefixed ULIDs, so ordering by id is ordering by creation time
 * and every list index is (account_id, [filter,] id).
 */
export const sql = /* sql */ `
CREATE TABLE accounts (
  id text PRIMARY KEY,
  name text NOT NULL,
  status text NOT NULL DEFAULT 'healthy' CHECK (status IN ('healthy', 'review', 'paused', 'banned')),
  daily_quota integer NOT NULL DEFAULT 100 CHECK (daily_quota >= 0),
  status_changed_at timestamptz NOT NULL DEFAULT now(),
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE domains (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  verification_token text NOT NULL,
  verified_at timestamptz,
  open_tracking boolean NOT NULL DEFAULT false,
  click_tracking boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (account_id, name)
);

-- Keys are stored as SHA-256 digests only; key_prefix is what an operator sees to tell keys apart.
CREATE TABLE api_keys (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  permission text NOT NULL CHECK (permission IN ('read_only', 'send_only', 'all')),
  allowed_domains text[] NOT NULL DEFAULT '{}',
  key_hash bytea NOT NULL UNIQUE,
  key_prefix text NOT NULL,
  request_count bigint NOT NULL DEFAULT 0,
  error_count bigint NOT NULL DEFAULT 0,
  email_sent_count bigint NOT NULL DEFAULT 0,
  last_used_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz
);
CREATE INDEX api_keys_account ON api_keys (account_id, id) WHERE deleted_at IS NULL;

CREATE TABLE emails (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  api_key_id text,
  job_type text NOT NULL CHECK (job_type IN ('direct', 'scheduled', 'batch')),
  job_id text NOT NULL DEFAULT '',
  from_address text NOT NULL,
  to_addresses text[] NOT NULL,
  cc_addresses text[] NOT NULL DEFAULT '{}',
  bcc_addresses text[] NOT NULL DEFAULT '{}',
  reply_to text[] NOT NULL DEFAULT '{}',
  subject text NOT NULL,
  html text NOT NULL DEFAULT '',
  text_body text NOT NULL DEFAULT '',
  headers jsonb NOT NULL DEFAULT '{}',
  tags jsonb NOT NULL DEFAULT '{}',
  attachment_count integer NOT NULL DEFAULT 0,
  size_bytes integer NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'delivered', 'bounced', 'complained')),
  -- Fixed when the email is accepted, so that every attempt carries the same Message-ID.
  header_message_id text NOT NULL,
  -- The transport's id, set once the mail server accepted the message (empty until then, as the spec shows).
  message_id text NOT NULL DEFAULT '',
  attempts integer NOT NULL DEFAULT 0,
  -- A delivery attempt owns the email while lease_until is in the future (see temporal/activities).
  lease_token text,
  lease_until timestamptz,
  smtp_response text,
  last_error text,
  sent_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX emails_account ON emails (account_id, id);
CREATE INDEX emails_account_status ON emails (account_id, status, id);
CREATE INDEX emails_account_job_type ON emails (account_id, job_type, id);
CREATE INDEX emails_account_job_id ON emails (account_id, job_id, id) WHERE job_id <> '';

-- Attachments of emails and of scheduled emails, kept apart from the rows that lists read.
CREATE TABLE attachments (
  owner_id text NOT NULL,
  position smallint NOT NULL,
  filename text NOT NULL,
  content_type text NOT NULL,
  content bytea NOT NULL,
  PRIMARY KEY (owner_id, position)
);

-- The outbox of accepted emails not yet handed to a delivery workflow (delivery/queue/dispatcher).
CREATE TABLE delivery_queue (
  email_id text PRIMARY KEY REFERENCES emails (id),
  enqueued_at timestamptz NOT NULL DEFAULT now(),
  group_id text,
  claimed_at timestamptz
);
CREATE INDEX delivery_queue_unclaimed ON delivery_queue (enqueued_at) WHERE group_id IS NULL;
CREATE INDEX delivery_queue_claimed ON delivery_queue (claimed_at) WHERE group_id IS NOT NULL;

CREATE TABLE scheduled_emails (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  api_key_id text,
  -- The validated send request without its attachments (those are in attachments, owner_id = id).
  draft jsonb NOT NULL,
  from_address text NOT NULL,
  to_addresses text[] NOT NULL,
  subject text NOT NULL,
  scheduled_at timestamptz NOT NULL,
  status text NOT NULL DEFAULT 'enqueued' CHECK (status IN ('enqueued', 'sent', 'cancelled')),
  attempts integer NOT NULL DEFAULT 0,
  email_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  sent_at timestamptz,
  cancelled_at timestamptz
);
CREATE INDEX scheduled_emails_account ON scheduled_emails (account_id, id);
CREATE INDEX scheduled_emails_account_status ON scheduled_emails (account_id, status, id);

CREATE TABLE batch_jobs (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  api_key_id text,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'processing', 'completed', 'failed')),
  total_count integer NOT NULL,
  sent_count integer NOT NULL DEFAULT 0,
  failed_count integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  completed_at timestamptz
);
CREATE INDEX batch_jobs_account ON batch_jobs (account_id, id);
CREATE INDEX batch_jobs_account_status ON batch_jobs (account_id, status, id);

-- The webhook secret signs every delivery, so it is kept (not hashed), and shown once at creation.
CREATE TABLE webhooks (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  url text NOT NULL,
  events text[] NOT NULL,
  secret text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz
);
CREATE INDEX webhooks_account ON webhooks (account_id, id) WHERE deleted_at IS NULL;

CREATE TABLE events (
  id text PRIMARY KEY,
  email_id text NOT NULL REFERENCES emails (id),
  account_id text NOT NULL REFERENCES accounts (id),
  type text NOT NULL CHECK (type IN ('send', 'delivery', 'bounce', 'complaint', 'reject', 'open', 'click')),
  data jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_email ON events (email_id, id);
CREATE INDEX events_account ON events (account_id, id);

-- Emails accepted per account and UTC day (the daily quota).
CREATE TABLE quota_usage (
  account_id text NOT NULL REFERENCES accounts (id),
  day date NOT NULL,
  used integer NOT NULL DEFAULT 0,
  PRIMARY KEY (account_id, day)
);

-- response is NULL while the first request with the key is still being answered.
CREATE TABLE idempotency_keys (
  account_id text NOT NULL REFERENCES accounts (id),
  key text NOT NULL,
  operation text NOT NULL,
  request_hash bytea NOT NULL,
  response jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- What the built-in mail catcher received (SMTP_URL unset).
CREATE TABLE caught_messages (
  id text PRIMARY KEY,
  message_id text NOT NULL DEFAULT '',
  envelope_from text NOT NULL DEFAULT '',
  envelope_to text[] NOT NULL DEFAULT '{}',
  subject text NOT NULL DEFAULT '',
  size integer NOT NULL,
  path text NOT NULL DEFAULT '',
  raw bytea NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX caught_messages_message_id ON caught_messages (message_id);
`;
