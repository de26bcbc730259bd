import postgres from 'postgres';
import type {
  Template,
  TemplateContent,
  TemplateDraft,
  TemplateLocalizations,
  TemplateRow,
  TemplateSummary,
  TemplateVariable,
} from '../../domain/entities/templates.js';
import { isTemplateId } from '../../domain/template-fields.js';
import { AppError, notFound } from '../../errors.js';
import { jsonb, type Sql, type Tx } from '../sql.js';

type RawRow = {
  id: string;
  account_id: string;
  name: string;
  alias: string | null;
  latest_version: number;
  published_version: number;
  created_at: Date;
  updated_at: Date;
};
type RawVersion = {
  version: number;
  subject: string;
  html: string;
  text_body: string;
  variables: TemplateVariable[];
  localizations: TemplateLocalizations;
  version_created_at: Date;
};

const toRow = (r: RawRow): TemplateRow => ({
  id: r.id,
  accountId: r.account_id,
  name: r.name,
  alias: r.alias,
  latestVersion: r.latest_version,
  publishedVersion: r.published_version,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});
const toTemplate = (r: RawRow, v: RawVersion): Template => ({
  ...toRow(r),
  version: v.version,
  subject: v.subject,
  html: v.html,
  text: v.text_body,
  variables: v.variables,
  localizations: v.localizations,
  versionCreatedAt: v.version_created_at,
});

/** The channel migration 24's trigger notifies, with the account's id, when a template of the account changes. */
export const TEMPLATES_CHANNEL = 'mail_templates';

/** Which version of a template to read: the newest, the one sends use, or a number. */
export type VersionPick = 'latest' | 'published' | number;

/** The unique index that keeps an alias to one live template of an account (migration 22). */
const ALIAS_INDEX = 'templates_alias_key';
const ACCOUNT_KEY = 'templates_account_id_fkey';

/**
 * A write's failure in the API's terms: 409 for an alias another live template of the account holds, 404 for an
 * account that does not exist (an operator's call may name one); other errors pass through.
 */
function writeFailure(err: unknown, accountId: string, alias: string | null): unknown {
  if (!(err instanceof postgres.PostgresError)) return err;
  if (err.code === '23505' && err.constraint_name === ALIAS_INDEX)
    return new AppError('conflict', `alias "${alias ?? ''}" is already used by another template of this account`, {
      cause: err,
    });
  if (err.code === '23503' && err.constraint_name === ACCOUNT_KEY) return notFound('account', accountId);
  return err;
}

/**
 * Templates and their versions (migration 22). Every read and write is scoped to an account: another account's
 * template, and a deleted one, is as absent as a missing one. A template is named by its id or its alias (aliases
 * never start `tpl_`, so the form tells which, and each reads one index). The version columns only move under the
 * template row's lock, so concurrent edits get consecutive versions, none lost.
 */
export function createTemplatesRepo(sql: Sql) {
  /** The live template `idOrAlias` of the account, as a condition on `templates t`. */
  const named = (db: Sql | Tx, accountId: string, idOrAlias: string) =>
    db`t.account_id = ${accountId} and t.deleted_at is null and ${isTemplateId(idOrAlias) ? db`t.id` : db`t.alias`} = ${idOrAlias}`;

  const versionOf = (db: Sql | Tx, pick: VersionPick) =>
    pick === 'latest' ? db`t.latest_version` : pick === 'published' ? db`t.published_version` : db`${pick}::int`;

  const read = async (db: Sql | Tx, accountId: string, idOrAlias: string, pick: VersionPick) => {
    const [r] = await db<(RawRow & RawVersion)[]>`
      select t.*, v.version, v.subject, v.html, v.text_body, v.variables, v.localizations, v.created_at as version_created_at
      from templates t join template_versions v on v.template_id = t.id and v.version = ${versionOf(db, pick)}
      where ${named(db, accountId, idOrAlias)}`;
    return r && toTemplate(r, r);
  };

  const insertVersion = async (tx: Tx, templateId: string, version: number, c: TemplateContent) => {
    const [v] = await tx<RawVersion[]>`
      insert into template_versions (template_id, version, subject, html, text_body, variables, localizations)
      values (${templateId}, ${version}, ${c.subject}, ${c.html}, ${c.text}, ${jsonb(tx, c.variables)}, ${jsonb(tx, c.localizations)})
      returning version, subject, html, text_body, variables, localizations, created_at as version_created_at`;
    return v!;
  };

  /** Locks the live template `idOrAlias` of the account for the rest of the transaction; answers its row. */
  const lock = async (tx: Tx, accountId: string, idOrAlias: string) => {
    const [r] = await tx<RawRow[]>`select t.* from templates t where ${named(tx, accountId, idOrAlias)} for update`;
    return r;
  };

  return {
    /** A new template: version 1, published. 409 when the alias is taken. */
    async create(t: { id: string; accountId: string; draft: TemplateDraft }): Promise<Template> {
      try {
        return (await sql.begin(async (tx) => {
          // Both version columns name version 1, inserted next: their foreign keys are checked at commit.
          const [row] = await tx<RawRow[]>`
            insert into templates (id, account_id, name, alias, latest_version, published_version)
            values (${t.id}, ${t.accountId}, ${t.draft.name}, ${t.draft.alias}, 1, 1) returning *`;
          return toTemplate(row!, await insertVersion(tx, t.id, 1, t.draft.content));
        })) as Template;
      } catch (err) {
        throw writeFailure(err, t.accountId, t.draft.alias);
      }
    },

    /** A page of the account's live templates, newest first, with how many it has in all. */
    async list(accountId: string, limit: number, offset: number): Promise<{ rows: TemplateSummary[]; total: number }> {
      // Few rows an account (templates are written by hand), so count(*) over templates_account is cheap;
      // the counters of list-counts.ts are for the mail tables.
      const [rows, [count]] = await Promise.all([
        sql<(RawRow & { subject: string })[]>`
          select t.*, v.subject
          from templates t join template_versions v on v.template_id = t.id and v.version = t.latest_version
          where t.account_id = ${accountId} and t.deleted_at is null
          order by t.id desc limit ${limit} offset ${offset}`,
        sql<{ n: number }[]>`
          select count(*)::int as n from templates where account_id = ${accountId} and deleted_at is null`,
      ]);
      return { rows: rows.map((r) => ({ ...toRow(r), subject: r.subject })), total: count?.n ?? 0 };
    },

    /**
     * Which version a send would render, without its content: the template's id and that version's number, or
     * undefined when the account has no such live template or it has no such version. A send reads this on
     * every call; the content only when that version is not compiled yet (services/template-renderer.ts).
     */
    async pin(
      accountId: string,
      idOrAlias: string,
      pick: VersionPick,
    ): Promise<{ id: string; version: number } | undefined> {
      const [r] = await sql<{ id: string; version: number }[]>`
        select t.id, ${versionOf(sql, pick)} as version from templates t
        where ${named(sql, accountId, idOrAlias)} and ${versionOf(sql, pick)} between 1 and t.latest_version`;
      return r;
    },

    /** The live template `idOrAlias` of the account with the content of one version (default the latest). */
    get: (accountId: string, idOrAlias: string, pick: VersionPick = 'latest'): Promise<Template | undefined> =>
      read(sql, accountId, idOrAlias, pick),

    /**
     * An edit: `change` turns the latest version (with the template's name and alias) into the next draft (it
     * may throw to refuse it); that is stored as version latest + 1, and `published_version` stays. The template
     * row is locked first and the latest version read after, so an edit waiting on another builds on its
     * result. Undefined when there is no such live template; 409 when the new alias is taken.
     */
    async edit(
      accountId: string,
      idOrAlias: string,
      change: (current: TemplateDraft) => TemplateDraft,
    ): Promise<Template | undefined> {
      let alias: string | null = null;
      try {
        return (await sql.begin(async (tx) => {
          const locked = await lock(tx, accountId, idOrAlias);
          if (!locked) return undefined;
          const current = (await read(tx, accountId, locked.id, 'latest'))!;
          const next = change({ name: current.name, alias: current.alias, content: current });
          alias = next.alias;
          const version = locked.latest_version + 1;
          const [row] = await tx<RawRow[]>`
            update templates set name = ${next.name}, alias = ${next.alias}, latest_version = ${version}, updated_at = now()
            where id = ${locked.id} returning *`;
          return toTemplate(row!, await insertVersion(tx, locked.id, version, next.content));
        })) as Template | undefined;
      } catch (err) {
        throw writeFailure(err, accountId, alias);
      }
    },

    /**
     * Makes `version` (default the latest) the one sends use; answers the template at its latest version.
     * `no_version` when the template has no such version, undefined when there is no such live template.
     */
    async publish(
      accountId: string,
      idOrAlias: string,
      version?: number,
    ): Promise<Template | 'no_version' | undefined> {
      return (await sql.begin(async (tx) => {
        const locked = await lock(tx, accountId, idOrAlias);
        if (!locked) return undefined;
        const target = version ?? locked.latest_version;
        // Versions run from 1 to latest_version without a gap (only edit adds one, under this lock).
        if (target > locked.latest_version) return 'no_version' as const;
        await tx`update templates set published_version = ${target}, updated_at = now() where id = ${locked.id}`;
        return (await read(tx, accountId, locked.id, 'latest'))!;
      })) as Template | 'no_version' | undefined;
    },

    /**
     * Soft delete: the template is gone for every read and send, its alias free at once; its versions stay, so an
     * email rendered from it still names stored content (migration 22). False when there was no such live template.
     */
    async delete(accountId: string, idOrAlias: string): Promise<boolean> {
      const rows = await sql`
        update templates t set deleted_at = now(), updated_at = now() where ${named(sql, accountId, idOrAlias)} returning t.id`;
      return rows.length > 0;
    },
  };
}
export type TemplatesRepo = ReturnType<typeof createTemplatesRepo>;
