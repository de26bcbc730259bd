-- The schema after all migrations (src/db/migrations). Generated: do not edit.
-- UPDATE_SCHEMA=1 npx vitest run test/integration/schema-snapshot.test.ts writes it anew.

CREATE TABLE accounts (
  id text NOT NULL,
  name text NOT NULL,
  status text NOT NULL DEFAULT 'healthy'::text,
  daily_quota integer NOT NULL DEFAULT 100,
  status_changed_at timestamp with time zone NOT NULL DEFAULT now(),
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  quota_before_review integer,
  brand_name text,
  brand_logo_url text,
  CONSTRAINT accounts_brand_logo_url_check CHECK (((char_length(brand_logo_url) <= 2048) AND (brand_logo_url ~~ 'https://%'::text))),
  CONSTRAINT accounts_brand_name_check CHECK (((char_length(brand_name) >= 1) AND (char_length(brand_name) <= 100))),
  CONSTRAINT accounts_daily_quota_check CHECK ((daily_quota >= 0)),
  CONSTRAINT accounts_status_check CHECK ((status = ANY (ARRAY['healthy'::text, 'review'::text, 'paused'::text, 'banned'::text]))),
  CONSTRAINT accounts_pkey PRIMARY KEY (id)
);

-- Emails accepted per key and UTC day, against api_keys.daily_quota.
CREATE TABLE api_key_quota_usage (
  api_key_id text NOT NULL,
  day date NOT NULL,
  used integer NOT NULL DEFAULT 0,
  CONSTRAINT api_key_quota_usage_api_key_id_fkey FOREIGN KEY (api_key_id) REFERENCES api_keys(id),
  CONSTRAINT api_key_quota_usage_pkey PRIMARY KEY (api_key_id, day)
);

CREATE TABLE api_keys (
  id text NOT NULL,
  account_id text NOT NULL,
  name text NOT NULL,
  permission text NOT NULL,
  allowed_domains text[] NOT NULL DEFAULT '{}'::text[],
  key_hash bytea NOT NULL,
  key_prefix text NOT NULL,
  request_count bigint NOT NULL DEFAULT 0,
  error_count bigint NOT NULL DEFAULT 0,
  email_sent_count bigint NOT NULL DEFAULT 0,
  last_used_at timestamp with time zone,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  deleted_at timestamp with time zone,
  rate_limit integer,
  daily_quota integer,
  expires_at timestamp with time zone,
  CONSTRAINT api_keys_daily_quota_check CHECK ((daily_quota >= 0)),
  CONSTRAINT api_keys_permission_check CHECK ((permission = ANY (ARRAY['read_only'::text, 'send_only'::text, 'all'::text]))),
  CONSTRAINT api_keys_rate_limit_check CHECK ((rate_limit >= 1)),
  CONSTRAINT api_keys_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id),
  CONSTRAINT api_keys_pkey PRIMARY KEY (id),
  CONSTRAINT api_keys_key_hash_key UNIQUE (key_hash)
);

CREATE TABLE attachments (
  owner_id text NOT NULL,
  position smallint NOT NULL,
  filename text NOT NULL,
  content_type text NOT NULL,
  content bytea NOT NULL,
  content_id text,
  CONSTRAINT attachments_pkey PRIMARY KEY (owner_id, "position")
);

CREATE TABLE batch_jobs (
  id text NOT NULL,
  account_id text NOT NULL,
  api_key_id text,
  status text NOT NULL DEFAULT 'pending'::text,
  total_count integer NOT NULL,
  sent_count integer NOT NULL DEFAULT 0,
  failed_count integer NOT NULL DEFAULT 0,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  started_at timestamp with time zone,
  completed_at timestamp with time zone,
  workflow_started boolean NOT NULL DEFAULT false,
  CONSTRAINT batch_jobs_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'processing'::text, 'completed'::text, 'failed'::text]))),
  CONSTRAINT batch_jobs_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id),
  CONSTRAINT batch_jobs_pkey PRIMARY KEY (id)
);

CREATE TABLE caught_messages (
  id text NOT NULL,
  message_id text NOT NULL DEFAULT ''::text,
  envelope_from text NOT NULL DEFAULT ''::text,
  envelope_to text[] NOT NULL DEFAULT '{}'::text[],
  subject text NOT NULL DEFAULT ''::text,
  size integer NOT NULL,
  path text NOT NULL DEFAULT ''::text,
  raw bytea NOT NULL,
  received_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT caught_messages_pkey PRIMARY KEY (id)
);

-- Console sign-ins: SHA-256 of the cookie token; api_key_id NULL is the operator (admin token).
CREATE TABLE console_sessions (
  token_hash bytea NOT NULL,
  api_key_id text,
  csrf_token text NOT NULL,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  expires_at timestamp with time zone NOT NULL,
  CONSTRAINT console_sessions_api_key_id_fkey FOREIGN KEY (api_key_id) REFERENCES api_keys(id) ON DELETE CASCADE,
  CONSTRAINT console_sessions_pkey PRIMARY KEY (token_hash)
);

CREATE TABLE delivery_queue (
  email_id text NOT NULL,
  enqueued_at timestamp with time zone NOT NULL DEFAULT now(),
  group_id text,
  claimed_at timestamp with time zone,
  CONSTRAINT delivery_queue_pkey PRIMARY KEY (email_id)
);

CREATE TABLE dkim_keys (
  id text NOT NULL,
  domain_id text NOT NULL,
  selector text NOT NULL,
  algorithm text NOT NULL DEFAULT 'rsa'::text,
  public_key text NOT NULL,
  private_key_sealed text NOT NULL,
  status text NOT NULL,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  activated_at timestamp with time zone,
  retired_at timestamp with time zone,
  CONSTRAINT dkim_keys_algorithm_check CHECK ((algorithm = 'rsa'::text)),
  CONSTRAINT dkim_keys_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'active'::text, 'retired'::text]))),
  CONSTRAINT dkim_keys_domain_id_fkey FOREIGN KEY (domain_id) REFERENCES domains(id) ON DELETE CASCADE,
  CONSTRAINT dkim_keys_pkey PRIMARY KEY (id),
  CONSTRAINT dkim_keys_domain_id_selector_key UNIQUE (domain_id, selector)
);

CREATE TABLE domains (
  id text NOT NULL,
  account_id text NOT NULL,
  name text NOT NULL,
  verification_token text NOT NULL,
  verified_at timestamp with time zone,
  open_tracking boolean NOT NULL DEFAULT false,
  click_tracking boolean NOT NULL DEFAULT false,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  dns_checked_at timestamp with time zone,
  dns_statuses jsonb NOT NULL DEFAULT '{}'::jsonb,
  dns_failing_since timestamp with time zone,
  CONSTRAINT domains_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id),
  CONSTRAINT domains_pkey PRIMARY KEY (id),
  CONSTRAINT domains_account_id_name_key UNIQUE (account_id, name)
);

-- Egress shaping state per destination site: throttles, suspensions and recent replies every worker honours.
CREATE TABLE egress_sites (
  site text NOT NULL,
  throttle_rate text,
  throttled_until timestamp with time zone,
  suspended_until timestamp with time zone,
  suspended_sources jsonb NOT NULL DEFAULT '[]'::jsonb,
  last_replies jsonb NOT NULL DEFAULT '[]'::jsonb,
  connections integer NOT NULL DEFAULT 0,
  attempts_last_minute integer NOT NULL DEFAULT 0,
  updated_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT egress_sites_attempts_last_minute_check CHECK ((attempts_last_minute >= 0)),
  CONSTRAINT egress_sites_connections_check CHECK ((connections >= 0)),
  CONSTRAINT egress_sites_pkey PRIMARY KEY (site)
);

-- Messages reserved per source address per UTC day against its warm-up plan.
CREATE TABLE egress_warmup_usage (
  source_address text NOT NULL,
  day date NOT NULL,
  sent integer NOT NULL DEFAULT 0,
  CONSTRAINT egress_warmup_usage_sent_check CHECK ((sent >= 0)),
  CONSTRAINT egress_warmup_usage_pkey PRIMARY KEY (source_address, day)
);

CREATE TABLE emails (
  id text NOT NULL,
  account_id text NOT NULL,
  api_key_id text,
  job_type text NOT NULL,
  job_id text NOT NULL DEFAULT ''::text,
  from_address text NOT NULL,
  to_addresses text[] NOT NULL,
  cc_addresses text[] NOT NULL DEFAULT '{}'::text[],
  bcc_addresses text[] NOT NULL DEFAULT '{}'::text[],
  reply_to text[] NOT NULL DEFAULT '{}'::text[],
  subject text NOT NULL,
  html text NOT NULL DEFAULT ''::text,
  text_body text NOT NULL DEFAULT ''::text,
  headers jsonb NOT NULL DEFAULT '{}'::jsonb,
  tags jsonb NOT NULL DEFAULT '{}'::jsonb,
  attachment_count integer NOT NULL DEFAULT 0,
  size_bytes integer NOT NULL,
  status text NOT NULL DEFAULT 'pending'::text,
  header_message_id text NOT NULL,
  message_id text NOT NULL DEFAULT ''::text,
  attempts integer NOT NULL DEFAULT 0,
  lease_token text,
  lease_until timestamp with time zone,
  smtp_response text,
  last_error text,
  sent_at timestamp with time zone,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  mailboxes jsonb NOT NULL,
  sender_domain text NOT NULL,
  remaining_recipients text[],
  traceparent text,
  content_expired_at timestamp with time zone,
  answered_recipients jsonb,
  template jsonb,
  stream text NOT NULL DEFAULT 'transactional'::text,
  topic text,
  CONSTRAINT emails_job_type_check CHECK ((job_type = ANY (ARRAY['direct'::text, 'scheduled'::text, 'batch'::text]))),
  CONSTRAINT emails_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'sent'::text, 'delivered'::text, 'bounced'::text, 'complained'::text]))),
  CONSTRAINT emails_stream_check CHECK ((stream = ANY (ARRAY['transactional'::text, 'broadcast'::text]))),
  CONSTRAINT emails_pkey PRIMARY KEY (id)
) WITH (fillfactor=80);

CREATE TABLE events (
  id text NOT NULL,
  email_id text,
  account_id text NOT NULL,
  type text NOT NULL,
  data jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  tx xid8 NOT NULL DEFAULT pg_current_xact_id(),
  counts_for_health boolean NOT NULL DEFAULT true,
  inbound_id text,
  CONSTRAINT events_subject_check CHECK (((email_id IS NOT NULL) OR (inbound_id IS NOT NULL))),
  CONSTRAINT events_type_check CHECK ((type = ANY (ARRAY['send'::text, 'delivery'::text, 'bounce'::text, 'complaint'::text, 'reject'::text, 'open'::text, 'click'::text, 'unsubscribe'::text, 'inbound'::text, 'reply'::text]))),
  CONSTRAINT events_inbound_id_fkey FOREIGN KEY (inbound_id) REFERENCES inbound_emails(id),
  CONSTRAINT events_pkey PRIMARY KEY (id)
);

CREATE TABLE idempotency_keys (
  account_id text NOT NULL,
  key text NOT NULL,
  operation text NOT NULL,
  request_hash bytea NOT NULL,
  response jsonb,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT idempotency_keys_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id),
  CONSTRAINT idempotency_keys_pkey PRIMARY KEY (account_id, key)
);

-- Stored bytes of inbound mail (raw messages, attachments), in order by seq, chunks of at most 256 KiB.
CREATE TABLE inbound_blobs (
  key text NOT NULL,
  seq integer NOT NULL,
  data bytea NOT NULL,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT inbound_blobs_data_check CHECK ((octet_length(data) <= 262144)),
  CONSTRAINT inbound_blobs_seq_check CHECK ((seq >= 0)),
  CONSTRAINT inbound_blobs_pkey PRIMARY KEY (key, seq)
);

-- Mail received for an inbound route, as parsed on arrival; the bytes are in inbound_blobs.
CREATE TABLE inbound_emails (
  id text NOT NULL,
  account_id text NOT NULL,
  route_id text NOT NULL,
  received_at timestamp with time zone NOT NULL DEFAULT now(),
  envelope_from text NOT NULL DEFAULT ''::text,
  envelope_to text NOT NULL,
  remote_address text NOT NULL DEFAULT ''::text,
  from_address text NOT NULL DEFAULT ''::text,
  from_name text NOT NULL DEFAULT ''::text,
  to_addresses jsonb NOT NULL DEFAULT '[]'::jsonb,
  cc_addresses jsonb NOT NULL DEFAULT '[]'::jsonb,
  reply_to_addresses jsonb NOT NULL DEFAULT '[]'::jsonb,
  subject text NOT NULL DEFAULT ''::text,
  text_body text NOT NULL DEFAULT ''::text,
  html_body text NOT NULL DEFAULT ''::text,
  stripped_text text NOT NULL DEFAULT ''::text,
  headers jsonb NOT NULL DEFAULT '[]'::jsonb,
  message_id text NOT NULL DEFAULT ''::text,
  in_reply_to text NOT NULL DEFAULT ''::text,
  mailbox_hash text NOT NULL DEFAULT ''::text,
  attachments jsonb NOT NULL DEFAULT '[]'::jsonb,
  authentication jsonb NOT NULL DEFAULT '{}'::jsonb,
  raw_key text NOT NULL,
  raw_size bigint NOT NULL,
  reply_to_email_id text,
  CONSTRAINT inbound_emails_raw_size_check CHECK ((raw_size >= 0)),
  CONSTRAINT inbound_emails_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id),
  CONSTRAINT inbound_emails_reply_to_email_id_fkey FOREIGN KEY (reply_to_email_id) REFERENCES emails(id),
  CONSTRAINT inbound_emails_pkey PRIMARY KEY (id)
);

-- Addresses an account receives mail at: local@domain, or *@domain (local_part '*').
CREATE TABLE inbound_routes (
  id text NOT NULL,
  account_id text NOT NULL,
  domain_id text NOT NULL,
  local_part text NOT NULL,
  domain text NOT NULL,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT inbound_routes_domain_check CHECK (((char_length(domain) >= 1) AND (char_length(domain) <= 253))),
  CONSTRAINT inbound_routes_local_part_check CHECK (((char_length(local_part) >= 1) AND (char_length(local_part) <= 64))),
  CONSTRAINT inbound_routes_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id),
  CONSTRAINT inbound_routes_domain_id_fkey FOREIGN KEY (domain_id) REFERENCES domains(id),
  CONSTRAINT inbound_routes_pkey PRIMARY KEY (id),
  CONSTRAINT inbound_routes_domain_local_part_key UNIQUE (domain, local_part)
);

-- Exact totals of each account's lists (emails, scheduled, batch) per status and job type, for GET /emails
-- and the others to answer total without counting rows. Kept by the *_counted_* triggers inside the writing
-- transaction, each writing the slot of its connection (pg_backend_pid() % 128; rows from before migration
-- 0036 hold slots up to 1023) so that concurrent writers rarely wait on one row; a total is the sum of its
-- slots (db/repos/list-counts.ts).
CREATE TABLE list_counts (
  account_id text NOT NULL,
  list text NOT NULL,
  status text NOT NULL,
  job_type text NOT NULL DEFAULT ''::text,
  slot smallint NOT NULL,
  n bigint NOT NULL,
  CONSTRAINT list_counts_list_check CHECK ((list = ANY (ARRAY['emails'::text, 'scheduled'::text, 'batch'::text]))),
  CONSTRAINT list_counts_pkey PRIMARY KEY (account_id, list, status, job_type, slot)
) WITH (fillfactor=50);

CREATE TABLE quota_usage (
  account_id text NOT NULL,
  day date NOT NULL,
  used integer NOT NULL DEFAULT 0,
  CONSTRAINT quota_usage_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id),
  CONSTRAINT quota_usage_pkey PRIMARY KEY (account_id, day)
);

CREATE TABLE rate_buckets (
  key_id text NOT NULL,
  tokens double precision NOT NULL,
  refilled_at timestamp with time zone NOT NULL,
  granted integer NOT NULL,
  CONSTRAINT rate_buckets_pkey PRIMARY KEY (key_id)
) WITH (fillfactor=50);

CREATE TABLE scheduled_emails (
  id text NOT NULL,
  account_id text NOT NULL,
  api_key_id text,
  draft jsonb NOT NULL,
  from_address text NOT NULL,
  to_addresses text[] NOT NULL,
  subject text NOT NULL,
  scheduled_at timestamp with time zone NOT NULL,
  status text NOT NULL DEFAULT 'enqueued'::text,
  attempts integer NOT NULL DEFAULT 0,
  email_id text,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  sent_at timestamp with time zone,
  cancelled_at timestamp with time zone,
  workflow_started boolean NOT NULL DEFAULT false,
  content_expired_at timestamp with time zone,
  CONSTRAINT scheduled_emails_status_check CHECK ((status = ANY (ARRAY['enqueued'::text, 'sent'::text, 'cancelled'::text]))),
  CONSTRAINT scheduled_emails_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id),
  CONSTRAINT scheduled_emails_pkey PRIMARY KEY (id)
);

CREATE TABLE schema_migrations (
  version integer NOT NULL,
  name text NOT NULL,
  applied_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT schema_migrations_pkey PRIMARY KEY (version)
);

CREATE TABLE settings (
  name text NOT NULL,
  value text NOT NULL,
  CONSTRAINT settings_pkey PRIMARY KEY (name)
);

-- The last event (in feed order: tx, id) of each account folded into stats_rollup.
CREATE TABLE stats_fold_marks (
  account_id text NOT NULL,
  tx xid8 NOT NULL,
  id text NOT NULL,
  folded_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT stats_fold_marks_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id),
  CONSTRAINT stats_fold_marks_pkey PRIMARY KEY (account_id)
);

-- The newest bounce replies per recipient domain, addresses redacted (GET /stats sample_replies).
CREATE TABLE stats_replies (
  account_id text NOT NULL,
  recipient_domain text NOT NULL,
  reply text NOT NULL,
  last_at timestamp with time zone NOT NULL,
  CONSTRAINT stats_replies_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id),
  CONSTRAINT stats_replies_pkey PRIMARY KEY (account_id, recipient_domain, reply)
);

-- GET /stats counters: recipients per account, dimension, UTC day of acceptance and key (folded from events).
CREATE TABLE stats_rollup (
  account_id text NOT NULL,
  dim text NOT NULL,
  day date NOT NULL,
  key text NOT NULL,
  accepted bigint NOT NULL DEFAULT 0,
  delivered bigint NOT NULL DEFAULT 0,
  bounced bigint NOT NULL DEFAULT 0,
  complained bigint NOT NULL DEFAULT 0,
  opened bigint NOT NULL DEFAULT 0,
  clicked bigint NOT NULL DEFAULT 0,
  unsubscribed bigint NOT NULL DEFAULT 0,
  CONSTRAINT stats_rollup_dim_check CHECK ((dim = ANY (ARRAY['stream'::text, 'domain'::text, 'recipient_domain'::text, 'tag'::text]))),
  CONSTRAINT stats_rollup_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id),
  CONSTRAINT stats_rollup_pkey PRIMARY KEY (account_id, dim, day, key)
) WITH (fillfactor=70);

CREATE TABLE suppressions (
  id text NOT NULL,
  account_id text NOT NULL,
  address text NOT NULL,
  reason text NOT NULL,
  email_id text,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  scope text NOT NULL DEFAULT 'all'::text,
  topic text NOT NULL DEFAULT ''::text,
  CONSTRAINT suppressions_reason_check CHECK ((reason = ANY (ARRAY['bounce'::text, 'complaint'::text, 'unsubscribe'::text, 'manual'::text]))),
  CONSTRAINT suppressions_scope_check CHECK ((scope = ANY (ARRAY['all'::text, 'broadcast'::text]))),
  CONSTRAINT suppressions_topic_check CHECK (((topic = ''::text) OR (scope = 'broadcast'::text))),
  CONSTRAINT suppressions_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id),
  CONSTRAINT suppressions_pkey PRIMARY KEY (id),
  CONSTRAINT suppressions_account_id_address_scope_topic_key UNIQUE (account_id, address, scope, topic)
);

-- Every version of a template's content, immutable once written: subject, html, text (text_body), variables
-- ([{name, required, default?}]) and localizations ({locale: {subject?, html?, text?}}).
CREATE TABLE template_versions (
  template_id text NOT NULL,
  version integer NOT NULL,
  subject text NOT NULL,
  html text NOT NULL DEFAULT ''::text,
  text_body text NOT NULL DEFAULT ''::text,
  variables jsonb NOT NULL DEFAULT '[]'::jsonb,
  localizations jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT template_versions_localizations_check CHECK ((jsonb_typeof(localizations) = 'object'::text)),
  CONSTRAINT template_versions_subject_check CHECK ((subject <> ''::text)),
  CONSTRAINT template_versions_variables_check CHECK ((jsonb_typeof(variables) = 'array'::text)),
  CONSTRAINT template_versions_version_check CHECK ((version >= 1)),
  CONSTRAINT template_versions_template_id_fkey FOREIGN KEY (template_id) REFERENCES templates(id),
  CONSTRAINT template_versions_pkey PRIMARY KEY (template_id, version)
);

-- An account's stored templates (CONTRACT.md "Templates"), one row per template: its name, alias and which
-- version is live. Content is in template_versions. Soft-deleted (deleted_at), so an email's template
-- reference still names stored content; configuration, not mail, so retention and address erasure leave it.
CREATE TABLE templates (
  id text NOT NULL,
  account_id text NOT NULL,
  name text NOT NULL,
  alias text,
  latest_version integer NOT NULL,
  published_version integer NOT NULL,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  updated_at timestamp with time zone NOT NULL DEFAULT now(),
  deleted_at timestamp with time zone,
  CONSTRAINT templates_alias_check CHECK (((alias ~ '^[a-z0-9._-]{1,64}$'::text) AND (alias !~~ 'tpl\_%'::text))),
  CONSTRAINT templates_latest_version_check CHECK ((latest_version >= 1)),
  CONSTRAINT templates_name_check CHECK ((name <> ''::text)),
  CONSTRAINT templates_published_not_after_latest CHECK ((published_version <= latest_version)),
  CONSTRAINT templates_published_version_check CHECK ((published_version >= 1)),
  CONSTRAINT templates_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id),
  CONSTRAINT templates_latest_version_fkey FOREIGN KEY (id, latest_version) REFERENCES template_versions(template_id, version) DEFERRABLE INITIALLY DEFERRED,
  CONSTRAINT templates_published_version_fkey FOREIGN KEY (id, published_version) REFERENCES template_versions(template_id, version) DEFERRABLE INITIALLY DEFERRED,
  CONSTRAINT templates_pkey PRIMARY KEY (id)
);

CREATE TABLE tracking_counts (
  email_id text NOT NULL,
  open_count integer NOT NULL DEFAULT 0,
  click_count integer NOT NULL DEFAULT 0,
  event_count integer NOT NULL DEFAULT 0,
  last_event_id text,
  CONSTRAINT tracking_counts_email_id_fkey FOREIGN KEY (email_id) REFERENCES emails(id),
  CONSTRAINT tracking_counts_pkey PRIMARY KEY (email_id)
);

CREATE TABLE tracking_windows (
  email_id text NOT NULL,
  kind text NOT NULL,
  target bytea NOT NULL,
  last_event_at timestamp with time zone NOT NULL,
  CONSTRAINT tracking_windows_kind_check CHECK ((kind = ANY (ARRAY['open'::text, 'click'::text]))),
  CONSTRAINT tracking_windows_email_id_fkey FOREIGN KEY (email_id) REFERENCES emails(id),
  CONSTRAINT tracking_windows_pkey PRIMARY KEY (email_id, kind, target)
);

CREATE TABLE webhook_attempts (
  delivery_id text NOT NULL,
  attempt integer NOT NULL,
  started_at timestamp with time zone NOT NULL,
  status_code integer NOT NULL,
  latency_ms integer NOT NULL,
  response_excerpt text NOT NULL DEFAULT ''::text,
  error text NOT NULL DEFAULT ''::text,
  CONSTRAINT webhook_attempts_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES webhook_deliveries(id),
  CONSTRAINT webhook_attempts_pkey PRIMARY KEY (delivery_id, attempt)
);

-- One row per (event, webhook) to deliver: written by the events_queue_webhooks trigger in the transaction
-- that records the event, so an event and its deliveries commit together; the worker's webhook dispatcher
-- (webhooks/webhook-dispatcher.ts) claims pending rows, woken by NOTIFY mailer_webhook_queue.
CREATE TABLE webhook_deliveries (
  id text NOT NULL,
  webhook_id text NOT NULL,
  event_id text NOT NULL,
  account_id text NOT NULL,
  status text NOT NULL DEFAULT 'pending'::text,
  attempt_count integer NOT NULL DEFAULT 0,
  group_id text,
  claimed_at timestamp with time zone,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  completed_at timestamp with time zone,
  discard_reason text,
  CONSTRAINT webhook_deliveries_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'succeeded'::text, 'discarded'::text]))),
  CONSTRAINT webhook_deliveries_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id),
  CONSTRAINT webhook_deliveries_event_id_fkey FOREIGN KEY (event_id) REFERENCES events(id),
  CONSTRAINT webhook_deliveries_webhook_id_fkey FOREIGN KEY (webhook_id) REFERENCES webhooks(id),
  CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id)
);

CREATE TABLE webhooks (
  id text NOT NULL,
  account_id text NOT NULL,
  url text NOT NULL,
  events text[] NOT NULL,
  secret text NOT NULL,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  deleted_at timestamp with time zone,
  previous_secret text,
  previous_secret_until timestamp with time zone,
  consecutive_discards integer NOT NULL DEFAULT 0,
  failing_since timestamp with time zone,
  disabled_at timestamp with time zone,
  disabled_reason text,
  CONSTRAINT webhooks_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id),
  CONSTRAINT webhooks_pkey PRIMARY KEY (id)
);

CREATE INDEX api_keys_account ON public.api_keys USING btree (account_id, id) WHERE (deleted_at IS NULL);
CREATE INDEX batch_jobs_account ON public.batch_jobs USING btree (account_id, id);
CREATE INDEX batch_jobs_account_status ON public.batch_jobs USING btree (account_id, status, id);
CREATE INDEX batch_jobs_unstarted ON public.batch_jobs USING btree (created_at) WHERE (NOT workflow_started);
CREATE INDEX caught_messages_message_id ON public.caught_messages USING btree (message_id);
CREATE INDEX console_sessions_api_key ON public.console_sessions USING btree (api_key_id) WHERE (api_key_id IS NOT NULL);
CREATE INDEX console_sessions_expires ON public.console_sessions USING btree (expires_at);
CREATE INDEX delivery_queue_claimed ON public.delivery_queue USING btree (claimed_at) WHERE (group_id IS NOT NULL);
CREATE INDEX delivery_queue_unclaimed ON public.delivery_queue USING btree (enqueued_at) WHERE (group_id IS NULL);
CREATE UNIQUE INDEX dkim_keys_one_active ON public.dkim_keys USING btree (domain_id) WHERE (status = 'active'::text);
CREATE UNIQUE INDEX dkim_keys_one_pending ON public.dkim_keys USING btree (domain_id) WHERE (status = 'pending'::text);
CREATE INDEX domains_dns_recheck ON public.domains USING btree (dns_checked_at NULLS FIRST) WHERE (verified_at IS NOT NULL);
CREATE INDEX emails_account ON public.emails USING btree (account_id, id);
CREATE INDEX emails_account_job_id ON public.emails USING btree (account_id, job_id, id) WHERE (job_id <> ''::text);
CREATE INDEX emails_account_job_type ON public.emails USING btree (account_id, job_type, id);
CREATE INDEX emails_account_status ON public.emails USING btree (account_id, status, id);
CREATE INDEX emails_account_status_job_type ON public.emails USING btree (account_id, status, job_type, id);
CREATE INDEX emails_content_kept ON public.emails USING btree (id) WHERE (content_expired_at IS NULL);
CREATE INDEX emails_header_message_id ON public.emails USING btree (header_message_id);
CREATE INDEX events_account ON public.events USING btree (account_id, id);
CREATE INDEX events_account_feed ON public.events USING btree (account_id, tx, id);
CREATE INDEX events_account_type_feed ON public.events USING btree (account_id, type, tx, id);
CREATE INDEX events_email ON public.events USING btree (email_id, id);
CREATE INDEX events_inbound_id_idx ON public.events USING btree (inbound_id) WHERE (inbound_id IS NOT NULL);
CREATE INDEX idempotency_keys_created ON public.idempotency_keys USING btree (created_at);
CREATE INDEX inbound_emails_account_id_received_at_idx ON public.inbound_emails USING btree (account_id, received_at DESC, id DESC);
CREATE INDEX inbound_emails_received_at_idx ON public.inbound_emails USING btree (received_at);
CREATE INDEX inbound_emails_reply_to_email_id_idx ON public.inbound_emails USING btree (reply_to_email_id) WHERE (reply_to_email_id IS NOT NULL);
CREATE INDEX inbound_routes_account_id_created_at_idx ON public.inbound_routes USING btree (account_id, created_at DESC, id DESC);
CREATE INDEX inbound_routes_domain_id_idx ON public.inbound_routes USING btree (domain_id);
CREATE INDEX scheduled_emails_account ON public.scheduled_emails USING btree (account_id, id);
CREATE INDEX scheduled_emails_account_status ON public.scheduled_emails USING btree (account_id, status, id);
CREATE INDEX scheduled_emails_content_kept ON public.scheduled_emails USING btree (id) WHERE ((content_expired_at IS NULL) AND (status <> 'enqueued'::text));
CREATE INDEX scheduled_emails_unstarted ON public.scheduled_emails USING btree (created_at) WHERE ((NOT workflow_started) AND (status = 'enqueued'::text));
CREATE INDEX suppressions_account_created ON public.suppressions USING btree (account_id, created_at DESC, id DESC);
CREATE INDEX templates_account ON public.templates USING btree (account_id, id) WHERE (deleted_at IS NULL);
CREATE UNIQUE INDEX templates_alias_key ON public.templates USING btree (account_id, alias) WHERE ((deleted_at IS NULL) AND (alias IS NOT NULL));
CREATE INDEX webhook_deliveries_claimed ON public.webhook_deliveries USING btree (claimed_at) WHERE ((group_id IS NOT NULL) AND (status = 'pending'::text));
CREATE INDEX webhook_deliveries_discarded ON public.webhook_deliveries USING btree (webhook_id, created_at) WHERE (status = 'discarded'::text);
CREATE INDEX webhook_deliveries_event ON public.webhook_deliveries USING btree (event_id);
CREATE INDEX webhook_deliveries_unclaimed ON public.webhook_deliveries USING btree (created_at) WHERE ((group_id IS NULL) AND (status = 'pending'::text));
CREATE INDEX webhook_deliveries_webhook ON public.webhook_deliveries USING btree (webhook_id, id);
CREATE INDEX webhooks_account ON public.webhooks USING btree (account_id, id) WHERE (deleted_at IS NULL);

CREATE OR REPLACE FUNCTION public.confirm_principals(claims jsonb)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF EXISTS (
    SELECT 1 FROM jsonb_to_recordset(claims) AS c(key_id text, fingerprint text)
    WHERE NOT EXISTS (
      SELECT 1 FROM api_keys k JOIN accounts a ON a.id = k.account_id
      WHERE k.id = c.key_id AND k.deleted_at IS NULL
        AND (k.expires_at IS NULL OR k.expires_at > now())
        AND principal_fingerprint(k, a) = c.fingerprint)
  ) THEN
    RAISE EXCEPTION 'an API key or its account changed since this process read it' USING ERRCODE = 'MQ401';
  END IF;
  RETURN jsonb_array_length(claims);
END $function$;

-- emails_counted_in: inserted emails, counted per statement (one bump per account, status and job type, not
-- per row).
CREATE OR REPLACE FUNCTION public.list_counts_add_emails()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO list_counts AS c (account_id, list, status, job_type, slot, n)
  SELECT account_id, 'emails', status, job_type, pg_backend_pid() % 128, count(*) FROM added
  GROUP BY account_id, status, job_type ORDER BY account_id, status, job_type
  ON CONFLICT (account_id, list, status, job_type, slot) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END $function$;

-- The *_counted_in triggers of scheduled_emails and batch_jobs (TG_ARGV[0] names the list).
CREATE OR REPLACE FUNCTION public.list_counts_add_owned()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO list_counts AS c (account_id, list, status, job_type, slot, n)
  SELECT account_id, TG_ARGV[0], status, '', pg_backend_pid() % 128, count(*) FROM added
  GROUP BY account_id, status ORDER BY account_id, status
  ON CONFLICT (account_id, list, status, job_type, slot) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END $function$;

-- emails_counted_move: an UPDATE statement's net change of emails per account, status and job type (new rows
-- counted in, old rows out).
CREATE OR REPLACE FUNCTION public.list_counts_move_emails()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO list_counts AS c (account_id, list, status, job_type, slot, n)
  SELECT account_id, 'emails', status, job_type, pg_backend_pid() % 128, n
  FROM (
    SELECT account_id, status, job_type, sum(d) AS n
    FROM (
      SELECT account_id, status, job_type, 1 AS d FROM moved_to
      UNION ALL
      SELECT account_id, status, job_type, -1 AS d FROM moved_from) rows
    GROUP BY account_id, status, job_type) moves
  WHERE n <> 0 ORDER BY account_id, status, job_type
  ON CONFLICT (account_id, list, status, job_type, slot) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END $function$;

-- batch_counted_move: a batch job whose status or account changed moves between counts (one row at a time).
CREATE OR REPLACE FUNCTION public.list_counts_move_owned()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO list_counts AS c (account_id, list, status, job_type, slot, n)
  SELECT account_id, TG_ARGV[0], status, '', pg_backend_pid() % 128, n
  FROM (VALUES (OLD.account_id, OLD.status, -1), (NEW.account_id, NEW.status, 1)) AS moves(account_id, status, n)
  ORDER BY account_id, status
  ON CONFLICT (account_id, list, status, job_type, slot) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END $function$;

-- scheduled_counted_move: an UPDATE statement's net change of scheduled emails per account and status
-- (TG_ARGV[0] names the list).
CREATE OR REPLACE FUNCTION public.list_counts_move_owned_rows()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO list_counts AS c (account_id, list, status, job_type, slot, n)
  SELECT account_id, TG_ARGV[0], status, '', pg_backend_pid() % 128, n
  FROM (
    SELECT account_id, status, sum(d) AS n
    FROM (
      SELECT account_id, status, 1 AS d FROM moved_to
      UNION ALL
      SELECT account_id, status, -1 AS d FROM moved_from) rows
    GROUP BY account_id, status) moves
  WHERE n <> 0 ORDER BY account_id, status
  ON CONFLICT (account_id, list, status, job_type, slot) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END $function$;

-- emails_counted_out: deleted emails (retention, erasure, tests) leave the counts per statement.
CREATE OR REPLACE FUNCTION public.list_counts_remove_emails()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO list_counts AS c (account_id, list, status, job_type, slot, n)
  SELECT account_id, 'emails', status, job_type, pg_backend_pid() % 128, -count(*) FROM removed
  GROUP BY account_id, status, job_type ORDER BY account_id, status, job_type
  ON CONFLICT (account_id, list, status, job_type, slot) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END $function$;

-- The *_counted_out triggers of scheduled_emails and batch_jobs.
CREATE OR REPLACE FUNCTION public.list_counts_remove_owned()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO list_counts AS c (account_id, list, status, job_type, slot, n)
  SELECT account_id, TG_ARGV[0], status, '', pg_backend_pid() % 128, -count(*) FROM removed
  GROUP BY account_id, status ORDER BY account_id, status
  ON CONFLICT (account_id, list, status, job_type, slot) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END $function$;

-- A TRUNCATE of a counted table empties its list's counts (tests truncate; the service never does).
CREATE OR REPLACE FUNCTION public.list_counts_truncated()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  DELETE FROM list_counts WHERE list = TG_ARGV[0];
  RETURN NULL;
END $function$;

-- Notifies mail_templates with the account id when a template changes, so API processes forget the versions
-- they keep.
CREATE OR REPLACE FUNCTION public.notify_template_change()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM pg_notify('mail_templates', NEW.account_id);
  RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION public.principal_fingerprint(k api_keys, a accounts)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
  SELECT md5(row(k.account_id, k.permission, k.allowed_domains, k.rate_limit, k.daily_quota,
    extract(epoch FROM k.expires_at), a.status, a.daily_quota)::text)
$function$;

-- Webhook fan-out (events_queue_webhooks): each inserted event gets a delivery per live webhook of its
-- account subscribed to its type, pending, or discarded at once when the webhook is disabled; ids derive from
-- event and webhook, so a replayed insert adds nothing. NOTIFY wakes the dispatcher only when rows were
-- added.
CREATE OR REPLACE FUNCTION public.queue_events_for_webhooks()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
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
END $function$;

CREATE OR REPLACE FUNCTION public.reserve_daily_quota(counters jsonb)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
DECLARE
  granted integer;
BEGIN
  WITH r AS (
    SELECT * FROM jsonb_to_recordset(counters) AS r(account_id text, day date, n integer, cap integer)
  ), taken AS (
    INSERT INTO quota_usage AS q (account_id, day, used)
    SELECT r.account_id, r.day, r.n FROM r WHERE r.n <= r.cap ORDER BY r.account_id, r.day
    ON CONFLICT (account_id, day) DO UPDATE SET used = q.used + excluded.used
    WHERE q.used + excluded.used <= (SELECT r.cap FROM r WHERE r.account_id = excluded.account_id AND r.day = excluded.day)
    RETURNING 1
  )
  SELECT count(*) INTO granted FROM taken;
  IF granted < jsonb_array_length(counters) THEN
    RAISE EXCEPTION 'daily quota exceeded' USING ERRCODE = 'MQ429';
  END IF;
  RETURN granted;
END $function$;

CREATE TRIGGER batch_counted_in AFTER INSERT ON public.batch_jobs REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION list_counts_add_owned('batch');
CREATE TRIGGER batch_counted_move AFTER UPDATE OF status, account_id ON public.batch_jobs FOR EACH ROW WHEN (((old.status IS DISTINCT FROM new.status) OR (old.account_id IS DISTINCT FROM new.account_id))) EXECUTE FUNCTION list_counts_move_owned('batch');
CREATE TRIGGER batch_counted_out AFTER DELETE ON public.batch_jobs REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION list_counts_remove_owned('batch');
CREATE TRIGGER batch_counted_truncate AFTER TRUNCATE ON public.batch_jobs FOR EACH STATEMENT EXECUTE FUNCTION list_counts_truncated('batch');
CREATE TRIGGER emails_counted_in AFTER INSERT ON public.emails REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION list_counts_add_emails();
CREATE TRIGGER emails_counted_move AFTER UPDATE ON public.emails REFERENCING OLD TABLE AS moved_from NEW TABLE AS moved_to FOR EACH STATEMENT EXECUTE FUNCTION list_counts_move_emails();
CREATE TRIGGER emails_counted_out AFTER DELETE ON public.emails REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION list_counts_remove_emails();
CREATE TRIGGER emails_counted_truncate AFTER TRUNCATE ON public.emails FOR EACH STATEMENT EXECUTE FUNCTION list_counts_truncated('emails');
CREATE TRIGGER events_queue_webhooks AFTER INSERT ON public.events REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION queue_events_for_webhooks();
CREATE TRIGGER scheduled_counted_in AFTER INSERT ON public.scheduled_emails REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION list_counts_add_owned('scheduled');
CREATE TRIGGER scheduled_counted_move AFTER UPDATE ON public.scheduled_emails REFERENCING OLD TABLE AS moved_from NEW TABLE AS moved_to FOR EACH STATEMENT EXECUTE FUNCTION list_counts_move_owned_rows('scheduled');
CREATE TRIGGER scheduled_counted_out AFTER DELETE ON public.scheduled_emails REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION list_counts_remove_owned('scheduled');
CREATE TRIGGER scheduled_counted_truncate AFTER TRUNCATE ON public.scheduled_emails FOR EACH STATEMENT EXECUTE FUNCTION list_counts_truncated('scheduled');
CREATE TRIGGER templates_changed AFTER UPDATE ON public.templates FOR EACH ROW EXECUTE FUNCTION notify_template_change();
