/**
 * The copies of an email a delivery attempt has handed over (a `250` read) while its other recipients' copies
 * are still being sent: each recipient's copy is an SMTP transaction of its own, and an email's outcome is
 * recorded once all of them are answered. Kept here as they are answered, under the attempt's lease, so that
 * an attempt that dies meanwhile leaves them recorded: the next attempt sends only the others and records
 * these with its own outcome (their events included). Cleared by the outcome. NULL: none.
 */
export const sql = /* sql */ `
ALTER TABLE emails ADD COLUMN answered_recipients jsonb;
`;
