/**
 * Direct delivery sends one email to several servers (one per recipient domain), and each answers for its
 * own recipients: one may accept while another says "try later". `remaining_recipients` holds the bare
 * addresses a later attempt still has to deliver to; NULL means every recipient (nothing handed over yet).
 * An email whose remaining recipients are refused or expire still ends `delivered` when an earlier attempt
 * delivered to the others, which `sent_at` (set at the first acceptance) records.
 */
export const sql = /* sql */ `
ALTER TABLE emails ADD COLUMN remaining_recipients text[];
`;
