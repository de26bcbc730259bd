import type { AccountsRepo, TemplatesRepo } from '../db/index.js';
import type { Template, TemplateContent, TemplateSummary } from '../domain/entities/templates.js';
import { toPage } from '../domain/pagination.js';
import {
  checkVersion,
  patchedDraft,
  templateDraft,
  type TemplateInput,
  type TemplatePatch,
} from '../domain/template-fields.js';
import { invalid, notFound } from '../errors.js';
import { newId } from '../ids.js';

export interface TemplatesDeps {
  templates: TemplatesRepo;
  /**
   * Refuses content that does not compile (a 400 naming the line and column), run on every version before it
   * is stored. The rendering module supplies it; without one, content is checked by its field rules only.
   */
  checkCompiles?: (content: TemplateContent) => void;
  /** For operators, who name the account: an unknown one is a 404 rather than an empty list. */
  accounts?: Pick<AccountsRepo, 'get'>;
  /**
   * Told after an edit, publish or delete commits, so that this process forgets which versions the account's
   * sends render at once (other processes learn it by NOTIFY: services/pinned-versions.ts).
   */
  onChange?: (accountId: string) => void;
}

/**
 * Templates of an account (CONTRACT.md "Templates"): the stored, versioned content a send can name. Every call
 * is for one account, and another account's template is not found (404), as a missing or deleted one is. The
 * caller has authenticated the account and checked the key's permission; rendering is not here.
 */
export function createTemplatesService(deps: TemplatesDeps) {
  const checked = <T extends { content: TemplateContent }>(draft: T): T => {
    deps.checkCompiles?.(draft.content);
    return draft;
  };

  async function mustGet(accountId: string, idOrAlias: string): Promise<Template> {
    const template = await deps.templates.get(accountId, idOrAlias);
    if (!template) throw notFound('template', idOrAlias);
    return template;
  }

  return {
    /** 404 unless the account exists: an operator's call names one (an API key's is its own). */
    async assertAccount(accountId: string): Promise<void> {
      if (deps.accounts && !(await deps.accounts.get(accountId))) throw notFound('account', accountId);
    },

    /** A new template at version 1, published; 409 when the alias is taken. */
    async create(accountId: string, input: TemplateInput): Promise<Template> {
      const draft = checked(templateDraft(input));
      return deps.templates.create({ id: newId('template'), accountId, draft });
    },

    /** The account's templates, newest first, `page_size` a page (bodies left out: see TemplateSummary). */
    async list(
      accountId: string,
      q: { page: number; pageSize: number },
    ): Promise<{ templates: TemplateSummary[]; total: number }> {
      const { limit, offset } = toPage(q.page, q.pageSize, 'page_size');
      const { rows, total } = await deps.templates.list(accountId, limit, offset);
      return { templates: rows, total };
    },

    /** One template by id or alias, at its latest version. */
    get: mustGet,

    /** An edit: a new version (latest + 1) from the latest with the given fields replaced; sends keep the published one. */
    async edit(accountId: string, idOrAlias: string, patch: TemplatePatch): Promise<Template> {
      const edited = await deps.templates.edit(accountId, idOrAlias, (current) =>
        checked(patchedDraft(current, patch)),
      );
      if (!edited) throw notFound('template', idOrAlias);
      deps.onChange?.(accountId);
      return edited;
    },

    /** One version of a template; 404 when the template or the version does not exist. */
    async getVersion(accountId: string, idOrAlias: string, version: number): Promise<Template> {
      checkVersion('version', version);
      const template = await deps.templates.get(accountId, idOrAlias, version);
      if (template) return template;
      await mustGet(accountId, idOrAlias);
      throw notFound('version', `${version} of template ${idOrAlias}`);
    },

    /** Makes `version` (default the latest) the one sends use; answers the template at its latest version. */
    async publish(accountId: string, idOrAlias: string, version?: number): Promise<Template> {
      if (version !== undefined) checkVersion('version', version);
      const published = await deps.templates.publish(accountId, idOrAlias, version);
      if (published === undefined) throw notFound('template', idOrAlias);
      if (published === 'no_version') throw notFound('version', `${version} of template ${idOrAlias}`);
      deps.onChange?.(accountId);
      return published;
    },

    async delete(accountId: string, idOrAlias: string): Promise<void> {
      if (!(await deps.templates.delete(accountId, idOrAlias))) throw notFound('template', idOrAlias);
      deps.onChange?.(accountId);
    },

    /**
     * What a send names (`template: {id, version?}`): the template's id and the version to render (the
     * published one, or the one given), without its content. A send's fields are wrong, not a resource
     * missing, so an unknown, deleted or other account's template is a 400 naming `template.id`, and a version
     * it does not have one naming `template.version` (CONTRACT.md).
     */
    async resolveForSend(
      accountId: string,
      idOrAlias: string,
      version?: number,
    ): Promise<{ id: string; version: number }> {
      if (idOrAlias === '') throw invalid('template.id is required');
      if (version !== undefined) checkVersion('template.version', version);
      const pinned = await deps.templates.pin(accountId, idOrAlias, version ?? 'published');
      if (pinned) return pinned;
      if (version !== undefined && (await deps.templates.pin(accountId, idOrAlias, 'latest')))
        throw invalid(`template.version: template ${idOrAlias} has no version ${version}`);
      throw invalid(`template.id: no template ${idOrAlias} (unknown or deleted)`);
    },
  };
}
export type TemplatesService = ReturnType<typeof createTemplatesService>;
