/**
 * One-click unsubscribe (issue 25; CONTRACT.md, "Streams, one-click unsubscribe and suppressions").
 *
 * - Events gain the type `unsubscribe`: a recipient unsubscribed from a broadcast email (its data
 *   `{recipient, topic}`). Webhooks subscribed to it get it through the events_queue_webhooks trigger as any other.
 * - An account's unsubscribe page can be branded: `brand_name` (shown instead of the account's name) and
 *   `brand_logo_url` (an https URL shown as the page's logo), both set by operators, both optional. The lengths
 *   are bounded here as well as in the API, so no other writer can store a page-sized value.
 */
export const sql = /* sql */ `
ALTER TABLE events DROP CONSTRAINT events_type_check;
ALTER TABLE events ADD CONSTRAINT events_type_check
  CHECK (type IN ('send', 'delivery', 'bounce', 'complaint', 'reject', 'open', 'click', 'unsubscribe'));

ALTER TABLE accounts ADD COLUMN brand_name text
  CONSTRAINT accounts_brand_name_check CHECK (char_length(brand_name) BETWEEN 1 AND 100);
ALTER TABLE accounts ADD COLUMN brand_logo_url text
  CONSTRAINT accounts_brand_logo_url_check CHECK (char_length(brand_logo_url) <= 2048 AND brand_logo_url LIKE 'https://%');
COMMENT ON COLUMN accounts.brand_name IS 'The name the unsubscribe page shows for the account (NULL: the account''s name).';
COMMENT ON COLUMN accounts.brand_logo_url IS 'An https URL of a logo the unsubscribe page shows (NULL: none).';
`;
