/**
 * Data lifecycle (issue 12): content expires after MAILER_RETENTION_CONTENT_DAYS, history (events, webhook
 * deliveries and attempts, caught mail) after MAILER_RETENTION_EVENTS_DAYS, and an operator can erase one
 * email's content or every trace of one address (services/retention-service.ts, services/erasure-service.ts).
 *
 * Everything here is quick whatever the table sizes: the added columns are nullable without a default (a
 * catalog change, no rewrite), and the indexes are built once (on a large installation, in the time one
 * scan of emails and webhook_deliveries takes).
 *
 * - `content_expired_at`: when an email's (or a sent or cancelled scheduled email's) html, text, headers and
 *   attachments were removed, by retention or erasure. The partial indexes hold only rows whose content is
 *   still kept, so a retention batch finds the oldest of them without walking the expired ones.
 * - `webhook_deliveries (event_id)`: deleting an old event checks that no delivery still refers to it; without
 *   an index each check would scan the deliveries.
 */
export const sql = /* sql */ `
ALTER TABLE emails ADD COLUMN content_expired_at timestamptz;
CREATE INDEX emails_content_kept ON emails (id) WHERE content_expired_at IS NULL;

ALTER TABLE scheduled_emails ADD COLUMN content_expired_at timestamptz;
CREATE INDEX scheduled_emails_content_kept ON scheduled_emails (id) WHERE content_expired_at IS NULL AND status <> 'enqueued';

CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);
`;
