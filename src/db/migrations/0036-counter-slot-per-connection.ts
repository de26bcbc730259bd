/**
 * The list counters are moved by one statement per writing statement, whatever the number of keys it moves
 * (issue 30; docs/benchmark.md, "Session 20"). `list_counts_bump` took each key's slot with
 * `SELECT ... FOR UPDATE SKIP LOCKED` and then updated it: two statements a key, so a delivery outcome of ten
 * accounts' emails ran forty statements inside its own, an accept of them twenty (15 % of PostgreSQL's time in a
 * throughput run, and the reason ten accounts cost more per email than one).
 *
 * Now each statement trigger upserts all its keys at once into the slot of its connection,
 * `pg_backend_pid() % 128`. A connection runs one transaction at a time, so two writers meet on a slot only when
 * their connections' pids fall on the same one, and then the second waits for the first to commit, as any two
 * writers of one row do (the upsert adds to the latest committed count: no delta is lost or applied twice). The
 * keys are upserted in key order, so two statements meeting on a slot wait in the same order and never deadlock
 * on each other. A key has at most 128 slots, so a total stays a sum of a few hundred rows at most.
 */
export const sql = /* sql */ `
CREATE OR REPLACE FUNCTION list_counts_add_emails() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO list_counts AS c (account_id, list, status, job_type, slot, n)
  SELECT account_id, 'emails', status, job_type, pg_backend_pid() % 128, count(*) FROM added
  GROUP BY account_id, status, job_type ORDER BY account_id, status, job_type
  ON CONFLICT (account_id, list, status, job_type, slot) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION list_counts_move_emails() RETURNS trigger LANGUAGE plpgsql AS $$
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
END $$;

CREATE OR REPLACE FUNCTION list_counts_remove_emails() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO list_counts AS c (account_id, list, status, job_type, slot, n)
  SELECT account_id, 'emails', status, job_type, pg_backend_pid() % 128, -count(*) FROM removed
  GROUP BY account_id, status, job_type ORDER BY account_id, status, job_type
  ON CONFLICT (account_id, list, status, job_type, slot) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION list_counts_add_owned() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO list_counts AS c (account_id, list, status, job_type, slot, n)
  SELECT account_id, TG_ARGV[0], status, '', pg_backend_pid() % 128, count(*) FROM added
  GROUP BY account_id, status ORDER BY account_id, status
  ON CONFLICT (account_id, list, status, job_type, slot) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION list_counts_move_owned_rows() RETURNS trigger LANGUAGE plpgsql AS $$
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
END $$;

CREATE OR REPLACE FUNCTION list_counts_remove_owned() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO list_counts AS c (account_id, list, status, job_type, slot, n)
  SELECT account_id, TG_ARGV[0], status, '', pg_backend_pid() % 128, -count(*) FROM removed
  GROUP BY account_id, status ORDER BY account_id, status
  ON CONFLICT (account_id, list, status, job_type, slot) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END $$;

-- The batch row trigger: its job's old key out, its new key in, in key order.
CREATE OR REPLACE FUNCTION list_counts_move_owned() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO list_counts AS c (account_id, list, status, job_type, slot, n)
  SELECT account_id, TG_ARGV[0], status, '', pg_backend_pid() % 128, n
  FROM (VALUES (OLD.account_id, OLD.status, -1), (NEW.account_id, NEW.status, 1)) AS moves(account_id, status, n)
  ORDER BY account_id, status
  ON CONFLICT (account_id, list, status, job_type, slot) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END $$;

COMMENT ON TABLE list_counts IS
  'Exact totals of each account''s lists (emails, scheduled, batch) per status and job type, for GET /emails and the others to answer total without counting rows. Kept by the *_counted_* triggers inside the writing transaction, each writing the slot of its connection (pg_backend_pid() % 128; rows from before migration 0036 hold slots up to 1023) so that concurrent writers rarely wait on one row; a total is the sum of its slots (db/repos/list-counts.ts).';
-- No trigger calls the per-key bump any more.
DROP FUNCTION list_counts_bump(text, text, text, text, bigint);
`;
