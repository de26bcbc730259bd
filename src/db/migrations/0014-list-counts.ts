/**
 * Lists at scale (issue 12). The lists answer an exact `total` with each page; count(*) over an account's
 * million emails took most of a page's time. `list_counts` keeps those totals exact instead, per account,
 * list, status and (for emails) job type, maintained by triggers in the writing transaction, so that every
 * writer (accept, batch, firing, delivery outcome, feedback, a rollback, a future one) keeps them right:
 *
 * - INSERT and DELETE: one statement-level trigger per statement, aggregating its transition table (a batch
 *   of 100 is one counter update, not 100);
 * - UPDATE: a row-level trigger limited to the counted columns, whose WHEN clause PostgreSQL checks without
 *   calling any function, so the many updates that change no status (leases, attempts, counters, content
 *   removal) cost nothing. (PostgreSQL refuses transition tables on a trigger with a column list.)
 * - TRUNCATE: the list's counters go with it.
 *
 * A single counter row per account and status would serialise every accept of an account on its row lock,
 * held until the commit's WAL flush. Each backend writes its own `slot` (pg_backend_pid() % 16): pooled
 * connections rarely share one, and a total is the sum over at most 16 rows per key. Slots may go negative
 * (an email counted in by one connection is counted out by another); only sums mean anything.
 *
 * The triggers are created before the backfill, in the same transaction: their lock (SHARE ROW EXCLUSIVE)
 * holds off writers until the commit, so no write can fall between the backfill and the triggers.
 *
 * The email list's page query finds the page's ids by an index-only scan and then reads those rows alone
 * (a deferred join); status with job type gets the index that makes it one range.
 */
export const sql = /* sql */ `
CREATE TABLE list_counts (
  account_id text NOT NULL,
  list text NOT NULL CHECK (list IN ('emails', 'scheduled', 'batch')),
  status text NOT NULL,
  job_type text NOT NULL DEFAULT '',
  slot smallint NOT NULL,
  n bigint NOT NULL,
  PRIMARY KEY (account_id, list, status, job_type, slot)
) WITH (fillfactor = 50);

CREATE FUNCTION list_counts_add_emails() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Sorted keys: two statements take the counter rows' locks in the same order.
  INSERT INTO list_counts AS c (account_id, list, status, job_type, slot, n)
  SELECT account_id, 'emails', status, job_type, pg_backend_pid() % 16, count(*) FROM added
  GROUP BY account_id, status, job_type ORDER BY account_id, status, job_type
  ON CONFLICT (account_id, list, status, job_type, slot) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END $$;

CREATE FUNCTION list_counts_remove_emails() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO list_counts AS c (account_id, list, status, job_type, slot, n)
  SELECT account_id, 'emails', status, job_type, pg_backend_pid() % 16, -count(*) FROM removed
  GROUP BY account_id, status, job_type ORDER BY account_id, status, job_type
  ON CONFLICT (account_id, list, status, job_type, slot) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END $$;

CREATE FUNCTION list_counts_move_email() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO list_counts AS c (account_id, list, status, job_type, slot, n)
  SELECT a, 'emails', s, j, pg_backend_pid() % 16, d
  FROM (VALUES (OLD.account_id, OLD.status, OLD.job_type, -1), (NEW.account_id, NEW.status, NEW.job_type, 1)) v(a, s, j, d)
  ORDER BY a, s, j
  ON CONFLICT (account_id, list, status, job_type, slot) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END $$;

-- Scheduled emails and batch jobs: counted by status only; TG_ARGV[0] names the list.
CREATE FUNCTION list_counts_add_owned() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO list_counts AS c (account_id, list, status, job_type, slot, n)
  SELECT account_id, TG_ARGV[0], status, '', pg_backend_pid() % 16, count(*) FROM added
  GROUP BY account_id, status ORDER BY account_id, status
  ON CONFLICT (account_id, list, status, job_type, slot) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END $$;

CREATE FUNCTION list_counts_remove_owned() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO list_counts AS c (account_id, list, status, job_type, slot, n)
  SELECT account_id, TG_ARGV[0], status, '', pg_backend_pid() % 16, -count(*) FROM removed
  GROUP BY account_id, status ORDER BY account_id, status
  ON CONFLICT (account_id, list, status, job_type, slot) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END $$;

CREATE FUNCTION list_counts_move_owned() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO list_counts AS c (account_id, list, status, job_type, slot, n)
  SELECT a, TG_ARGV[0], s, '', pg_backend_pid() % 16, d
  FROM (VALUES (OLD.account_id, OLD.status, -1), (NEW.account_id, NEW.status, 1)) v(a, s, d)
  ORDER BY a, s
  ON CONFLICT (account_id, list, status, job_type, slot) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END $$;

CREATE FUNCTION list_counts_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM list_counts WHERE list = TG_ARGV[0];
  RETURN NULL;
END $$;

CREATE TRIGGER emails_counted_in AFTER INSERT ON emails REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION list_counts_add_emails();
CREATE TRIGGER emails_counted_out AFTER DELETE ON emails REFERENCING OLD TABLE AS removed
  FOR EACH STATEMENT EXECUTE FUNCTION list_counts_remove_emails();
CREATE TRIGGER emails_counted_move AFTER UPDATE OF status, job_type, account_id ON emails FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.job_type IS DISTINCT FROM NEW.job_type OR OLD.account_id IS DISTINCT FROM NEW.account_id)
  EXECUTE FUNCTION list_counts_move_email();
CREATE TRIGGER emails_counted_truncate AFTER TRUNCATE ON emails FOR EACH STATEMENT EXECUTE FUNCTION list_counts_truncated('emails');

CREATE TRIGGER scheduled_counted_in AFTER INSERT ON scheduled_emails REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION list_counts_add_owned('scheduled');
CREATE TRIGGER scheduled_counted_out AFTER DELETE ON scheduled_emails REFERENCING OLD TABLE AS removed
  FOR EACH STATEMENT EXECUTE FUNCTION list_counts_remove_owned('scheduled');
CREATE TRIGGER scheduled_counted_move AFTER UPDATE OF status, account_id ON scheduled_emails FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.account_id IS DISTINCT FROM NEW.account_id)
  EXECUTE FUNCTION list_counts_move_owned('scheduled');
CREATE TRIGGER scheduled_counted_truncate AFTER TRUNCATE ON scheduled_emails FOR EACH STATEMENT EXECUTE FUNCTION list_counts_truncated('scheduled');

CREATE TRIGGER batch_counted_in AFTER INSERT ON batch_jobs REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION list_counts_add_owned('batch');
CREATE TRIGGER batch_counted_out AFTER DELETE ON batch_jobs REFERENCING OLD TABLE AS removed
  FOR EACH STATEMENT EXECUTE FUNCTION list_counts_remove_owned('batch');
CREATE TRIGGER batch_counted_move AFTER UPDATE OF status, account_id ON batch_jobs FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.account_id IS DISTINCT FROM NEW.account_id)
  EXECUTE FUNCTION list_counts_move_owned('batch');
CREATE TRIGGER batch_counted_truncate AFTER TRUNCATE ON batch_jobs FOR EACH STATEMENT EXECUTE FUNCTION list_counts_truncated('batch');

INSERT INTO list_counts (account_id, list, status, job_type, slot, n)
SELECT account_id, 'emails', status, job_type, 0, count(*) FROM emails GROUP BY account_id, status, job_type;
INSERT INTO list_counts (account_id, list, status, job_type, slot, n)
SELECT account_id, 'scheduled', status, '', 0, count(*) FROM scheduled_emails GROUP BY account_id, status;
INSERT INTO list_counts (account_id, list, status, job_type, slot, n)
SELECT account_id, 'batch', status, '', 0, count(*) FROM batch_jobs GROUP BY account_id, status;

CREATE INDEX emails_account_status_job_type ON emails (account_id, status, job_type, id);
`;
