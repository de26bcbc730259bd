/**
 * The email list's counters (0014) follow status changes per statement instead of per row. The row trigger
 * called list_counts_bump twice for every email whose delivery outcome was recorded, each call two
 * statements (a slot picked FOR UPDATE SKIP LOCKED, then updated): six statements an email, a large share of
 * the database's time under load (docs/benchmark.md, "Figures behind the code's choices"). A statement-level
 * trigger sees all the rows of an UPDATE at once and moves each key's count by the difference (new rows with
 * the key less old rows with it; an UPDATE never changes how many rows there are), so the outcomes of a whole
 * group cost one bump per status they reach.
 *
 * PostgreSQL refuses transition tables on a trigger with a column list, so this one fires for every UPDATE
 * of emails (leases, renewals, content removal): those move no count, and cost two aggregates over their
 * own rows and no bump.
 */
export const sql = /* sql */ `
CREATE FUNCTION list_counts_move_emails() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM list_counts_bump(account_id, 'emails', status, job_type, n)
  FROM (
    SELECT account_id, status, job_type, sum(d) AS n
    FROM (
      SELECT account_id, status, job_type, 1 AS d FROM moved_to
      UNION ALL
      SELECT account_id, status, job_type, -1 AS d FROM moved_from) rows
    GROUP BY account_id, status, job_type) moves
  WHERE n <> 0;
  RETURN NULL;
END $$;

DROP TRIGGER emails_counted_move ON emails;
DROP FUNCTION list_counts_move_email();
CREATE TRIGGER emails_counted_move AFTER UPDATE ON emails REFERENCING OLD TABLE AS moved_from NEW TABLE AS moved_to
  FOR EACH STATEMENT EXECUTE FUNCTION list_counts_move_emails();
`;
