/**
 * The foreign keys from `events` and `delivery_queue` to `emails` go (issue 30; docs/benchmark.md,
 * "Session 20"). Each checked its email with `SELECT ... FOR KEY SHARE`: three checks an email (the delivery's
 * two events and the queue row), each locking the email's row again and writing a WAL record for the lock,
 * 26 µs of PostgreSQL time an email. The reference cannot dangle: emails are never deleted (retention
 * empties their content: retention-repo.ts), every writer of an event takes the email id from the email's row
 * in the same statement or transaction, and the queue row is written by the statement that writes its email.
 * As for the account references 0033 dropped; the other references keep their keys.
 */
export const sql = /* sql */ `
ALTER TABLE events DROP CONSTRAINT events_email_id_fkey;
ALTER TABLE delivery_queue DROP CONSTRAINT delivery_queue_email_id_fkey;
`;
