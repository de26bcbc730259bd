/**
 * Streams and suppressions with a scope (issue 25; CONTRACT.md, "Streams, one-click unsubscribe and
 * suppressions").
 *
 * - `emails.stream` is the send's stream: `transactional` (the default, so every email already stored is one)
 *   or `broadcast`. `emails.topic` is a broadcast email's topic, NULL when it has none. A constant default adds
 *   the column without rewriting the table.
 * - A suppression now has a `scope`: `all` (every email to the address, as every existing one is) or `broadcast`
 *   (broadcast emails only), and for `broadcast` optionally one `topic`. The topic is stored as '' when there is
 *   none, not NULL, so that one plain unique constraint (and `on conflict` against it) covers "the same
 *   suppression twice"; the API shows '' as null. Reasons gain `unsubscribe` (one-click) and `manual` (added
 *   through the API or an import).
 */
export const sql = /* sql */ `
ALTER TABLE emails ADD COLUMN stream text NOT NULL DEFAULT 'transactional'
  CONSTRAINT emails_stream_check CHECK (stream IN ('transactional', 'broadcast'));
ALTER TABLE emails ADD COLUMN topic text;
COMMENT ON COLUMN emails.stream IS 'transactional (the default) or broadcast: which mail it is, for one-click unsubscribe, suppressions and stats.';
COMMENT ON COLUMN emails.topic IS 'A broadcast email''s topic (what an unsubscribe from it covers); NULL when it has none.';

ALTER TABLE suppressions DROP CONSTRAINT suppressions_reason_check;
ALTER TABLE suppressions ADD CONSTRAINT suppressions_reason_check
  CHECK (reason IN ('bounce', 'complaint', 'unsubscribe', 'manual'));
ALTER TABLE suppressions ADD COLUMN scope text NOT NULL DEFAULT 'all'
  CONSTRAINT suppressions_scope_check CHECK (scope IN ('all', 'broadcast'));
ALTER TABLE suppressions ADD COLUMN topic text NOT NULL DEFAULT ''
  CONSTRAINT suppressions_topic_check CHECK (topic = '' OR scope = 'broadcast');
ALTER TABLE suppressions DROP CONSTRAINT suppressions_account_id_address_key;
ALTER TABLE suppressions ADD CONSTRAINT suppressions_account_id_address_scope_topic_key
  UNIQUE (account_id, address, scope, topic);
CREATE INDEX suppressions_account_created ON suppressions (account_id, created_at DESC, id DESC);
COMMENT ON COLUMN suppressions.scope IS 'all: every email to the address; broadcast: broadcast emails only (of topic, when it is not empty).';
COMMENT ON COLUMN suppressions.topic IS 'The broadcast topic the suppression is for; empty when it is for every topic (or scope is all).';
`;
