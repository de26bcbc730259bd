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
 * held until the commit's WAL flush. A key has several rows (`slot`s): a writer adds to the first one no
 * other open transaction holds (FOR UPDATE SKIP LOCKED), or makes a new one when all are held, so writers
 * never wait for each other's commits (nor deadlock on counters), and a key has about as many slots as it
 * ever had writers at once. A total is the sum over them. Slots may go negative (an email counted in on one
 * slot is counted out on another); only sums mean anything.
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

-- Adds d to one key's count without waiting for another transaction: into the first of its slots that no
-- other open transaction holds (SKIP LOCKED), else into a new slot.
CREATE FUNCTION list_counts_bump(a text, l text, s text, j text, d bigint) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  free smallint;
BEGIN
  -- Two statements, not UPDATE ... FROM (SELECT ... FOR UPDATE SKIP LOCKED): in that one form a concurrent
  -- update's recheck can apply the delta twice (measured). Here the row is ours before the UPDATE's
  -- snapshot is taken, so the UPDATE reads its latest committed count.
  SELECT slot INTO free FROM list_counts WHERE account_id = a AND list = l AND status = s AND job_type = j LIMIT 1 FOR UPDATE SKIP LOCKED;
  IF FOUND THEN
    UPDATE list_counts SET n = n + d WHERE account_id = a AND list = l AND status = s AND job_type = j AND slot = free;
  ELSE
    INSERT INTO list_counts AS c (account_id, list, status, job_type, slot, n) VALUES (a, l, s, j, floor(random() * 1024), d)
    ON CONFLICT (account_id, list, status, job_type, slot) DO UPDATE SET n = c.n + excluded.n;
  END IF;
END $$;

CREATE FUNCTION list_counts_add_emails() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM list_counts_bump(account_id, 'emails', status, job_type, count(*)) FROM added GROUP BY account_id, status, job_type;
  RETURN NULL;
END $$;

CREATE FUNCTION list_counts_remove_emails() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM list_counts_bump(account_id, 'emails', status, job_type, -count(*)) FROM removed GROUP BY account_id, status, job_type;
  RETURN NULL;
END $$;

CREATE FUNCTION list_counts_move_email() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM list_counts_bump(OLD.account_id, 'emails', OLD.status, OLD.job_type, -1);
  PERFORM list_counts_bump(NEW.account_id, 'emails', NEW.status, NEW.job_type, 1);
  RETURN NULL;
END $$;

-- Scheduled emails and batch jobs: counted by status only; TG_ARGV[0] names the list.
CREATE FUNCTION list_counts_add_owned() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM list_counts_bump(account_id, TG_ARGV[0], status, '', count(*)) FROM added GROUP BY account_id, status;
  RETURN NULL;
END $$;

CREATE FUNCTION list_counts_remove_owned() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM list_counts_bump(account_id, TG_ARGV[0], status, '', -count(*)) FROM removed GROUP BY account_id, status;
  RETURN NULL;
END $$;

CREATE FUNCTION list_counts_move_owned() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM list_counts_bump(OLD.account_id, TG_ARGV[0], OLD.status, '', -1);
  PERFORM list_counts_bump(NEW.account_id, TG_ARGV[0], NEW.status, '', 1);
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
