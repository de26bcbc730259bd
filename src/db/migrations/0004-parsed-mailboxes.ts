/**
 * Addresses are stored as they were parsed at acceptance, never as the caller's text: `mailboxes` holds each
 * field's `{name, address}` (what the message's headers are built from), the address columns hold the bare
 * addresses (what the SMTP envelope gets, what suppressions and reports are matched on), and `sender_domain`
 * the From domain (what tracking settings and the Message-ID are looked up by). Scheduled drafts keep the
 * same parsed shape in their jsonb.
 *
 * Rows written before this migration held the caller's text, validated by a stricter regex that accepted
 * `address` or `Name <address>` only: that is the form converted here.
 */
export const sql = /* sql */ `
CREATE FUNCTION pg_temp.legacy_mailbox(input text) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN input ~ '<[^<>]*>[[:space:]]*$'
    THEN jsonb_build_object(
      'name', btrim(btrim(substring(input from '^(.*)<[^<>]*>[[:space:]]*$')), '"'),
      'address', substring(input from '<([^<>]*)>[[:space:]]*$'))
    ELSE jsonb_build_object('name', '', 'address', btrim(input)) END
$$;
CREATE FUNCTION pg_temp.legacy_mailboxes(input text[]) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(jsonb_agg(pg_temp.legacy_mailbox(x) ORDER BY i), '[]'::jsonb) FROM unnest(input) WITH ORDINALITY AS t(x, i)
$$;
CREATE FUNCTION pg_temp.addresses(mailboxes jsonb) RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
  SELECT array(SELECT m->>'address' FROM jsonb_array_elements(mailboxes) WITH ORDINALITY AS t(m, i) ORDER BY i)
$$;

ALTER TABLE emails ADD COLUMN mailboxes jsonb, ADD COLUMN sender_domain text;
UPDATE emails SET mailboxes = jsonb_build_object(
  'from', pg_temp.legacy_mailbox(from_address),
  'to', pg_temp.legacy_mailboxes(to_addresses),
  'cc', pg_temp.legacy_mailboxes(cc_addresses),
  'bcc', pg_temp.legacy_mailboxes(bcc_addresses),
  'replyTo', pg_temp.legacy_mailboxes(reply_to));
UPDATE emails SET
  from_address = mailboxes->'from'->>'address',
  to_addresses = pg_temp.addresses(mailboxes->'to'),
  cc_addresses = pg_temp.addresses(mailboxes->'cc'),
  bcc_addresses = pg_temp.addresses(mailboxes->'bcc'),
  reply_to = pg_temp.addresses(mailboxes->'replyTo'),
  sender_domain = lower(substring(mailboxes->'from'->>'address' from '@([^@]*)$'));
ALTER TABLE emails ALTER COLUMN mailboxes SET NOT NULL, ALTER COLUMN sender_domain SET NOT NULL;

UPDATE scheduled_emails SET draft = draft || jsonb_build_object(
  'from', pg_temp.legacy_mailbox(draft->>'from'),
  'to', pg_temp.legacy_mailboxes(array(SELECT jsonb_array_elements_text(draft->'to'))),
  'cc', pg_temp.legacy_mailboxes(array(SELECT jsonb_array_elements_text(draft->'cc'))),
  'bcc', pg_temp.legacy_mailboxes(array(SELECT jsonb_array_elements_text(draft->'bcc'))),
  'replyTo', pg_temp.legacy_mailboxes(array(SELECT jsonb_array_elements_text(draft->'replyTo'))))
WHERE jsonb_typeof(draft->'from') = 'string';
UPDATE scheduled_emails SET
  from_address = draft->'from'->>'address',
  to_addresses = pg_temp.addresses(draft->'to');
`;
