/**
 * Inbound mail (issue 26; CONTRACT.md, "Inbound mail"): routes that claim addresses of an account's domains, the
 * mail received for them, its stored bytes, and the events `inbound` and `reply`.
 *
 * - `inbound_routes`: one row per match, `local@domain` (local_part the lower-cased local part) or `*@domain`
 *   (local_part '*'). A match belongs to one account across the service: the unique key is (domain,
 *   local_part) with no account in it, so a second account's claim is a 409.
 * - `inbound_emails`: each message as parsed when it arrived. The parse is stored whole (bodies, headers,
 *   attachments' descriptions, authentication results) so reading it never parses again; `route_id` is kept as
 *   text without a reference, so deleting a route keeps the mail it received.
 * - `inbound_blobs`: the bytes behind `raw_key` and each attachment's `key` (src/inbound/blob-store.ts), in chunks
 *   of at most 256 KiB, written while the message arrives (no connection held across a slow client, no whole
 *   message in memory) and read back in order. Large objects were the other PostgreSQL option; they hold a
 *   transaction open while streaming and need lo_unlink beside every DELETE. The key names the inbound email
 *   (`<in_id>/raw`, `<in_id>/<n>`), so erasing one is a DELETE by prefix.
 * - Events: `inbound` (one per message; `inbound_id` set, `email_id` NULL: it is about no email we sent) and
 *   `reply` (on the email a message answered; `email_id` set, data `{inbound_id, from}`). Every event names one
 *   or the other. Every other query joins events to emails, so inbound events stay out of email counts.
 */
export const sql = /* sql */ `
CREATE TABLE inbound_routes (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts(id),
  domain_id text NOT NULL REFERENCES domains(id),
  local_part text NOT NULL CONSTRAINT inbound_routes_local_part_check CHECK (char_length(local_part) BETWEEN 1 AND 64),
  domain text NOT NULL CONSTRAINT inbound_routes_domain_check CHECK (char_length(domain) BETWEEN 1 AND 253),
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT inbound_routes_domain_local_part_key UNIQUE (domain, local_part)
);
CREATE INDEX inbound_routes_account_id_created_at_idx ON inbound_routes (account_id, created_at DESC, id DESC);
CREATE INDEX inbound_routes_domain_id_idx ON inbound_routes (domain_id);
COMMENT ON TABLE inbound_routes IS 'Addresses an account receives mail at: local@domain, or *@domain (local_part ''*'').';
COMMENT ON COLUMN inbound_routes.domain IS 'The match''s domain in its key form (ASCII, lower case): the route''s domain itself or a subdomain of it.';

CREATE TABLE inbound_emails (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts(id),
  route_id text NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  envelope_from text NOT NULL DEFAULT '',
  envelope_to text NOT NULL,
  remote_address text NOT NULL DEFAULT '',
  from_address text NOT NULL DEFAULT '',
  from_name text NOT NULL DEFAULT '',
  to_addresses jsonb NOT NULL DEFAULT '[]',
  cc_addresses jsonb NOT NULL DEFAULT '[]',
  reply_to_addresses jsonb NOT NULL DEFAULT '[]',
  subject text NOT NULL DEFAULT '',
  text_body text NOT NULL DEFAULT '',
  html_body text NOT NULL DEFAULT '',
  stripped_text text NOT NULL DEFAULT '',
  headers jsonb NOT NULL DEFAULT '[]',
  message_id text NOT NULL DEFAULT '',
  in_reply_to text NOT NULL DEFAULT '',
  mailbox_hash text NOT NULL DEFAULT '',
  attachments jsonb NOT NULL DEFAULT '[]',
  authentication jsonb NOT NULL DEFAULT '{}',
  raw_key text NOT NULL,
  raw_size bigint NOT NULL CONSTRAINT inbound_emails_raw_size_check CHECK (raw_size >= 0),
  reply_to_email_id text REFERENCES emails(id)
);
CREATE INDEX inbound_emails_account_id_received_at_idx ON inbound_emails (account_id, received_at DESC, id DESC);
CREATE INDEX inbound_emails_received_at_idx ON inbound_emails (received_at);
CREATE INDEX inbound_emails_reply_to_email_id_idx ON inbound_emails (reply_to_email_id) WHERE reply_to_email_id IS NOT NULL;
COMMENT ON TABLE inbound_emails IS 'Mail received for an inbound route, as parsed on arrival; the bytes are in inbound_blobs.';
COMMENT ON COLUMN inbound_emails.headers IS 'Every header as it arrived, in order: [{name, value}].';
COMMENT ON COLUMN inbound_emails.attachments IS '[{filename, content_type, size, content_id, key}]: key names the bytes in inbound_blobs.';
COMMENT ON COLUMN inbound_emails.authentication IS '{spf, dkim, dmarc}: each check''s result for the message as it arrived (pass, fail, none, ...).';

CREATE TABLE inbound_blobs (
  key text NOT NULL,
  seq integer NOT NULL CONSTRAINT inbound_blobs_seq_check CHECK (seq >= 0),
  data bytea NOT NULL CONSTRAINT inbound_blobs_data_check CHECK (octet_length(data) <= 262144),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (key, seq)
);
COMMENT ON TABLE inbound_blobs IS 'Stored bytes of inbound mail (raw messages, attachments), in order by seq, chunks of at most 256 KiB.';

ALTER TABLE events ALTER COLUMN email_id DROP NOT NULL;
ALTER TABLE events ADD COLUMN inbound_id text REFERENCES inbound_emails(id);
ALTER TABLE events ADD CONSTRAINT events_subject_check CHECK (email_id IS NOT NULL OR inbound_id IS NOT NULL);
CREATE INDEX events_inbound_id_idx ON events (inbound_id) WHERE inbound_id IS NOT NULL;
COMMENT ON COLUMN events.inbound_id IS 'The inbound email an inbound event is about (email_id NULL then).';
ALTER TABLE events DROP CONSTRAINT events_type_check;
ALTER TABLE events ADD CONSTRAINT events_type_check
  CHECK (type IN ('send', 'delivery', 'bounce', 'complaint', 'reject', 'open', 'click', 'unsubscribe', 'inbound', 'reply'));
`;
