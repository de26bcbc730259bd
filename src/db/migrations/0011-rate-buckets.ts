/**
 * The rate limit's token buckets, one row per API key, shared by every API process (rate-buckets-repo.ts).
 * UNLOGGED: a bucket is a second or so of state, not data. It costs no WAL, and after a crash of PostgreSQL
 * (or on a promoted standby) the table is empty, which only means full buckets: each key gets one fresh
 * burst. fillfactor 50 leaves room on each page so the constant updates stay HOT (no index writes).
 * `granted` is what the last lease handed out (RETURNING sees only the new row, so it is kept there).
 */
export const sql = /* sql */ `
CREATE UNLOGGED TABLE rate_buckets (
  key_id text PRIMARY KEY,
  tokens double precision NOT NULL,
  refilled_at timestamptz NOT NULL,
  granted integer NOT NULL
) WITH (fillfactor = 50);
`;
