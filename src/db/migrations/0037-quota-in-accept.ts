/**
 * A send's daily quota counted by the statement that stores it (issue 30; docs/benchmark.md, "Session 22").
 * A send made two statements, one after the other: the reservation on the account's counter row, then the
 * email. Every statement is a round trip, a wake-up of a PostgreSQL backend and of the API, and under load a
 * wait for a core: the reservation was a third of an accept's waits. Now the accept statement calls this
 * function, and the email and its count commit together or not at all, so a failed store has nothing to give
 * back and a crash cannot forget a count.
 *
 * `counters` is a JSON array of {account_id, day, n, cap}, one per account and day. Each counter takes `n` if
 * the day's usage stays within `cap`; if any does not, the function raises MQ429 and the whole statement (the
 * emails with it) rolls back: the caller tries its emails again one at a time, so that those with room are
 * kept. Rows are taken in account order, so that two such statements never wait on each other crosswise.
 */
export const sql = /* sql */ `
CREATE OR REPLACE FUNCTION reserve_daily_quota(counters jsonb) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  granted integer;
BEGIN
  WITH r AS (
    SELECT * FROM jsonb_to_recordset(counters) AS r(account_id text, day date, n integer, cap integer)
  ), taken AS (
    INSERT INTO quota_usage AS q (account_id, day, used)
    SELECT r.account_id, r.day, r.n FROM r WHERE r.n <= r.cap ORDER BY r.account_id, r.day
    ON CONFLICT (account_id, day) DO UPDATE SET used = q.used + excluded.used
    WHERE q.used + excluded.used <= (SELECT r.cap FROM r WHERE r.account_id = excluded.account_id AND r.day = excluded.day)
    RETURNING 1
  )
  SELECT count(*) INTO granted FROM taken;
  IF granted < jsonb_array_length(counters) THEN
    RAISE EXCEPTION 'daily quota exceeded' USING ERRCODE = 'MQ429';
  END IF;
  RETURN granted;
END $$;
`;
