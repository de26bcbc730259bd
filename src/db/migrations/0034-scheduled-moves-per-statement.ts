/**
 * The scheduled list's counters follow status changes per statement, as the email list's have since 0015.
 * Firing 500 due emails is one UPDATE of their scheduled rows, and the row trigger called list_counts_bump
 * twice for each (a slot picked FOR UPDATE SKIP LOCKED, then updated): 2,000 statements inside a firing of
 * 500, 20,000 for a second of 10,000 emails, while the second's first messages wait for the rest
 * (docs/benchmark.md, "Session 18"). The statement trigger moves each key's count by the difference of its new
 * and old rows: a firing costs two bumps. The updates that change no status (workflow_started) now run it
 * too, over their one row, and bump nothing. batch_jobs keeps its row trigger: its rows change status a few
 * times in a job's life, but every delivery outcome of a batch email updates its job's counters, which the
 * row trigger's WHEN clause skips without a call.
 */
export const sql = /* sql */ `
CREATE FUNCTION list_counts_move_owned_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM list_counts_bump(account_id, TG_ARGV[0], status, '', n)
  FROM (
    SELECT account_id, status, sum(d) AS n
    FROM (
      SELECT account_id, status, 1 AS d FROM moved_to
      UNION ALL
      SELECT account_id, status, -1 AS d FROM moved_from) rows
    GROUP BY account_id, status) moves
  WHERE n <> 0;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION list_counts_move_owned_rows() IS
  'scheduled_counted_move: an UPDATE statement''s net change of scheduled emails per account and status (TG_ARGV[0] names the list).';
COMMENT ON FUNCTION list_counts_move_owned() IS
  'batch_counted_move: a batch job whose status or account changed moves between counts (one row at a time).';

DROP TRIGGER scheduled_counted_move ON scheduled_emails;
CREATE TRIGGER scheduled_counted_move AFTER UPDATE ON scheduled_emails REFERENCING OLD TABLE AS moved_from NEW TABLE AS moved_to
  FOR EACH STATEMENT EXECUTE FUNCTION list_counts_move_owned_rows('scheduled');
`;
