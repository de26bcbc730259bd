/**
 * Self-service (issue 27; CONTRACT.md "Self-service").
 *
 * - An API key may carry its own limits below the account's: `rate_limit` (requests per second, NULL: the
 *   service's MAILER_RATE_LIMIT), `daily_quota` (emails per UTC day, NULL: the account's quota alone) and an
 *   `expires_at` after which it is refused. `api_key_quota_usage` counts each key's emails per UTC day, as
 *   quota_usage counts the account's, so the cap is checked in the acceptance's own transaction.
 * - The console signs in with an API key of permission `all` or the admin token and keeps the session in an
 *   HttpOnly cookie: `console_sessions` holds the SHA-256 of the cookie's token (never the token), the key it
 *   acts as (NULL: the operator, signed in with the admin token), the CSRF token every cookie-authenticated
 *   request must echo in a header, and when it ends. A deleted key's sessions go with it.
 */
export const sql = /* sql */ `
ALTER TABLE api_keys ADD COLUMN rate_limit integer CONSTRAINT api_keys_rate_limit_check CHECK (rate_limit >= 1);
ALTER TABLE api_keys ADD COLUMN daily_quota integer CONSTRAINT api_keys_daily_quota_check CHECK (daily_quota >= 0);
ALTER TABLE api_keys ADD COLUMN expires_at timestamptz;
COMMENT ON COLUMN api_keys.rate_limit IS 'Requests per second for this key (NULL: MAILER_RATE_LIMIT).';
COMMENT ON COLUMN api_keys.daily_quota IS 'Emails per UTC day accepted with this key (NULL: only the account''s quota).';
COMMENT ON COLUMN api_keys.expires_at IS 'From then on the key is refused (NULL: never).';

CREATE TABLE api_key_quota_usage (
  api_key_id text NOT NULL REFERENCES api_keys (id),
  day date NOT NULL,
  used integer NOT NULL DEFAULT 0,
  PRIMARY KEY (api_key_id, day)
);
COMMENT ON TABLE api_key_quota_usage IS 'Emails accepted per key and UTC day, against api_keys.daily_quota.';

CREATE TABLE console_sessions (
  token_hash bytea PRIMARY KEY,
  api_key_id text REFERENCES api_keys (id) ON DELETE CASCADE,
  csrf_token text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX console_sessions_api_key ON console_sessions (api_key_id) WHERE api_key_id IS NOT NULL;
CREATE INDEX console_sessions_expires ON console_sessions (expires_at);
COMMENT ON TABLE console_sessions IS 'Console sign-ins: SHA-256 of the cookie token; api_key_id NULL is the operator (admin token).';
`;
