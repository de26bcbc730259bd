/**
 * Templates (issue 24, CONTRACT.md "Templates"): stored Handlebars content an account's sends can name by id or
 * alias. A template row holds what is the template's own (name, alias, which version is live); every edit adds a
 * template_versions row with the whole content, so a send keeps rendering the published version while the next
 * one is edited, and an email rendered from version n can be read back as it was.
 *
 * - Versions are numbered from 1 without gaps: an edit locks its template row and inserts latest_version + 1
 *   (db/repos/templates-repo.ts). The two deferred foreign keys from templates to template_versions make
 *   `latest_version` and `published_version` always name a stored version (checked at commit, so the template
 *   and its first version are inserted in either order within one transaction).
 * - A delete is soft: `deleted_at` is set, the alias is free again at once (its unique index holds live templates
 *   only), and the versions stay, so an email's `template: {id, version}` still names stored content. Templates are
 *   the account's configuration, not mail: retention (services/retention-service.ts) does not purge them, and an
 *   erasure of a recipient's address (services/erasure-service.ts) does not scan them, since a recipient's data
 *   reaches a template only as a send's variables, rendered into the email and stored there, where erasure
 *   finds it. Like every account-owned table, templates reference accounts without ON DELETE: the service
 *   deletes no accounts, and a future account deletion removes an account's template_versions, then its
 *   templates, explicitly.
 * - An alias cannot start with `tpl_` (ids do), so `GET /templates/{id or alias}` is never ambiguous.
 */
export const sql = /* sql */ `
CREATE TABLE templates (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  name text NOT NULL CHECK (name <> ''),
  alias text CHECK (alias ~ '^[a-z0-9._-]{1,64}$' AND alias NOT LIKE 'tpl\\_%'),
  latest_version integer NOT NULL CHECK (latest_version >= 1),
  published_version integer NOT NULL CHECK (published_version >= 1),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz,
  CONSTRAINT templates_published_not_after_latest CHECK (published_version <= latest_version)
);
CREATE INDEX templates_account ON templates (account_id, id) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX templates_alias_key ON templates (account_id, alias) WHERE deleted_at IS NULL AND alias IS NOT NULL;

CREATE TABLE template_versions (
  template_id text NOT NULL REFERENCES templates (id),
  version integer NOT NULL CHECK (version >= 1),
  subject text NOT NULL CHECK (subject <> ''),
  html text NOT NULL DEFAULT '',
  text_body text NOT NULL DEFAULT '',
  variables jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(variables) = 'array'),
  localizations jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(localizations) = 'object'),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (template_id, version)
);

ALTER TABLE templates
  ADD CONSTRAINT templates_latest_version_fkey FOREIGN KEY (id, latest_version)
    REFERENCES template_versions (template_id, version) DEFERRABLE INITIALLY DEFERRED,
  ADD CONSTRAINT templates_published_version_fkey FOREIGN KEY (id, published_version)
    REFERENCES template_versions (template_id, version) DEFERRABLE INITIALLY DEFERRED;

COMMENT ON TABLE templates IS
  'An account''s stored templates (CONTRACT.md "Templates"), one row per template: its name, alias and which version is live. Content is in template_versions. Soft-deleted (deleted_at), so an email''s template reference still names stored content; configuration, not mail, so retention and address erasure leave it.';
COMMENT ON COLUMN templates.alias IS
  'The account''s own name for the template (1-64 of [a-z0-9._-], never starting tpl_ as ids do), unique among its live templates (templates_alias_key): a deleted template''s alias is free at once.';
COMMENT ON COLUMN templates.latest_version IS
  'The newest version: an edit locks the row and inserts latest_version + 1, so concurrent edits get consecutive versions and none is lost.';
COMMENT ON COLUMN templates.published_version IS
  'The version sends render (unless one names another); an edit leaves it, publish moves it. Both version columns name stored versions (deferred foreign keys).';
COMMENT ON TABLE template_versions IS
  'Every version of a template''s content, immutable once written: subject, html, text (text_body), variables ([{name, required, default?}]) and localizations ({locale: {subject?, html?, text?}}).';
`;
