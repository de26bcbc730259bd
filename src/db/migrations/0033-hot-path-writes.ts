/**
 * The writes every email costs, made cheaper (issue 30; docs/benchmark.md, "Session 18"):
 *
 * - `emails` leaves a fifth of each page free. A lease, its renewal and its release change no indexed
 *   column, so PostgreSQL can write the new row version beside the old one (a HOT update) instead of adding
 *   an entry to each of the table's eight indexes, but only when the page has room: rows arrive packed, and
 *   15,394 of 122,537 updates found room in a throughput run. Applies to pages written from now on.
 * - The foreign keys from `emails` and `events` to `accounts` go. Each checked its row with
 *   `SELECT ... FOR KEY SHARE` on the account: six checks an email, 34 µs of PostgreSQL time and a WAL record
 *   for each half of them, and every concurrent transaction of one account share-locked the same row (a
 *   multixact per overlap). Accounts are never deleted (closing one changes its status: accounts-repo.ts), and every
 *   writer takes the account id from the authenticated key or from the email row itself, so the reference
 *   cannot dangle; the other tables keep theirs.
 */
export const sql = /* sql */ `
ALTER TABLE emails SET (fillfactor = 80);
ALTER TABLE emails DROP CONSTRAINT emails_account_id_fkey;
ALTER TABLE events DROP CONSTRAINT events_account_id_fkey;
`;
