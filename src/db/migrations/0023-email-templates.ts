/**
 * The template an email was rendered from (`template` of GET /emails/:id): `{id, version, locale}`, written when
 * the email is accepted (or, for a scheduled email, carried in its stored draft and written when it fires).
 * NULL: the send gave its own subject and bodies. Nullable and without a default, so adding it rewrites nothing.
 */
export const sql = /* sql */ `
ALTER TABLE emails ADD COLUMN template jsonb;
COMMENT ON COLUMN emails.template IS
  'The template the email was rendered from: {id, version, locale}; NULL when the send gave its own content.';
`;
