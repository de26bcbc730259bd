/**
 * A complaint counts against its account's health only when it came from a feedback loop the operator
 * trusts (MAILER_FBL_SOURCES, inbound/feedback-sources.ts); one from anyone else is still the email's event,
 * kept apart here rather than in its data, which webhooks and the API show as the spec gives it.
 * Complaints recorded before counted, as they did then.
 */
export const sql = /* sql */ `
ALTER TABLE events ADD COLUMN counts_for_health boolean NOT NULL DEFAULT true;
`;
