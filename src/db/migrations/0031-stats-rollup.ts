/**
 * Stats (issue 27; CONTRACT.md "Stats and timelines", docs/api.md "Stats"): GET /stats answers from counters
 * folded ahead of time, so an account with a million emails is answered from a few hundred rows.
 *
 * - `stats_rollup`: recipients of an account's emails per UTC day the email was accepted, counted once per
 *   dimension a request can group by (`stream`, sender `domain`, `recipient_domain`, `tag` as name=value), so
 *   each grouping sums rows of its own dimension and no recipient is counted twice (group by day sums the
 *   `stream` rows: every email has exactly one stream).
 *   Room is left in each page (fillfactor 70): a fold adds to the same rows again and again, and an update
 *   that fits in its page touches no index (HOT), so the table does not swell between vacuums.
 * - `stats_fold_marks`: per account, the last event folded in feed order (tx, id). The fold
 *   (db/repos/stats-repo.ts) reads only events whose transaction is older than every one still open, as the
 *   events feed does (migration 0008), adds them to the rollup and moves the mark in one statement, so a
 *   retried or concurrent fold never counts an event twice and an event committed late is still counted.
 *   Nothing is added to the send or delivery path: no trigger, no new index on emails or events (the fold
 *   reads events by the feed's index (account_id, tx, id)).
 * - `stats_replies`: the 5 newest distinct bounce replies per recipient domain (the console's "why"), with
 *   every address in them replaced by `<address>`: the rollups hold no personal data (keys are days,
 *   domains, tags and streams), so retention and erasure leave them.
 */
export const sql = /* sql */ `
CREATE TABLE stats_rollup (
  account_id text NOT NULL REFERENCES accounts (id),
  dim text NOT NULL CHECK (dim IN ('stream', 'domain', 'recipient_domain', 'tag')),
  day date NOT NULL,
  key text NOT NULL,
  accepted bigint NOT NULL DEFAULT 0,
  delivered bigint NOT NULL DEFAULT 0,
  bounced bigint NOT NULL DEFAULT 0,
  complained bigint NOT NULL DEFAULT 0,
  opened bigint NOT NULL DEFAULT 0,
  clicked bigint NOT NULL DEFAULT 0,
  unsubscribed bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (account_id, dim, day, key)
) WITH (fillfactor = 70);
COMMENT ON TABLE stats_rollup IS 'GET /stats counters: recipients per account, dimension, UTC day of acceptance and key (folded from events).';

CREATE TABLE stats_fold_marks (
  account_id text PRIMARY KEY REFERENCES accounts (id),
  tx xid8 NOT NULL,
  id text NOT NULL,
  folded_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE stats_fold_marks IS 'The last event (in feed order: tx, id) of each account folded into stats_rollup.';

CREATE TABLE stats_replies (
  account_id text NOT NULL REFERENCES accounts (id),
  recipient_domain text NOT NULL,
  reply text NOT NULL,
  last_at timestamptz NOT NULL,
  PRIMARY KEY (account_id, recipient_domain, reply)
);
COMMENT ON TABLE stats_replies IS 'The newest bounce replies per recipient domain, addresses redacted (GET /stats sample_replies).';
`;
