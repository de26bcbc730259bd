import type { TemplatesRepo } from '../db/index.js';
import type { TemplateRefInput, TemplateStamp } from '../domain/entities/templates.js';
import type { WireJsonObject } from '../domain/json.js';
import {
  checkVersion,
  templateDraft,
  TEMPLATE_LIMITS,
  TEMPLATE_LOCALE_PATTERN,
  type TemplateInput,
} from '../domain/template-fields.js';
import { AppError, invalid, notFound } from '../errors.js';
import { CompiledTemplateCache } from '../templates/template-cache.js';
import {
  compileTemplate,
  renderTemplate,
  type CompiledTemplate,
  type RenderedTemplate,
  type RenderRequest,
} from '../templates/template-engine.js';
import { PinnedVersions, type PinnedVersion } from './pinned-versions.js';
import type { TemplatesService } from './templates-service.js';

export interface TemplateRendererDeps {
  templates: Pick<TemplatesRepo, 'get' | 'pin'>;
  service: Pick<TemplatesService, 'resolveForSend'>;
  cache?: CompiledTemplateCache;
  /** The published versions sends named, kept while the app listens for template changes. */
  pins?: PinnedVersions;
}

/** Versions already resolved in one request, by what the send named (`<id or alias>@<version>`): a batch resolves each once. */
export type { PinnedVersion };
export type PinMemo = Map<string, Promise<PinnedVersion>>;

/** A render as an email's (and the render endpoints') three fields: a field the template lacks is empty. */
export const renderedFields = (r: RenderedTemplate) => ({ subject: r.subject, html: r.html ?? '', text: r.text ?? '' });

/** A send's template rendered: its subject and bodies, and what the stored email says it came from. */
export interface RenderedRef {
  rendered: RenderedTemplate;
  stamp: TemplateStamp;
}

/** A requested locale: empty (none), or a BCP 47 tag as templates' localizations are keyed. */
function checkLocale(field: string, locale: string): void {
  if (locale === '') return;
  if (locale.length > TEMPLATE_LIMITS.localeChars || !TEMPLATE_LOCALE_PATTERN.test(locale))
    throw invalid(
      `${field} must be a language tag such as "de" or "de-AT" (at most ${TEMPLATE_LIMITS.localeChars} characters)`,
    );
}

/** A render asked for by a request of its own: the engine names a send's fields (`template.variables.x`), it `variables.x`. */
function renderedAsAsked(template: CompiledTemplate, req: RenderRequest): RenderedTemplate {
  try {
    return renderTemplate(template, { variables: req.variables ?? {}, locale: req.locale });
  } catch (err) {
    if (err instanceof AppError && err.message.startsWith('template.'))
      throw new AppError(err.kind, err.message.slice('template.'.length), { cause: err });
    throw err;
  }
}

/**
 * Renders stored templates: for a send (`template` of POST /emails, a batch item, a schedule) and for POST
 * /templates/:id/render. Each version is compiled once per process and kept (template-cache.ts): a send reads
 * only which version it renders, and the content only when that version is not compiled yet.
 */
export function createTemplateRenderer(deps: TemplateRendererDeps) {
  const cache = deps.cache ?? new CompiledTemplateCache();
  const pins = deps.pins ?? new PinnedVersions();

  /** The version a send names, from the process's memory when it holds it (pinned-versions.ts says when). */
  async function pin(accountId: string, ref: TemplateRefInput): Promise<PinnedVersion> {
    const key = `${ref.id}@${ref.version}`;
    const known = pins.get(accountId, key);
    if (known !== undefined) return known;
    const pinned = await deps.service.resolveForSend(accountId, ref.id, ref.version === 0 ? undefined : ref.version);
    pins.set(accountId, key, pinned);
    return pinned;
  }

  /** A version's key in the compiled cache: `<template id>@<version>`, immutable once stored. */
  const versionKey = (pinned: PinnedVersion) => `${pinned.id}@${pinned.version}`;

  async function compiled(accountId: string, pinned: PinnedVersion): Promise<CompiledTemplate> {
    const hit = cache.get(versionKey(pinned));
    if (hit !== undefined) return hit;
    const template = await deps.templates.get(accountId, pinned.id, pinned.version);
    // Deleted between the two reads: as a send naming a deleted template.
    if (template === undefined) throw invalid(`template.id: no template ${pinned.id} (unknown or deleted)`);
    return cache.compile(versionKey(pinned), template);
  }

  function renderWith(template: CompiledTemplate, pinned: PinnedVersion, ref: TemplateRefInput): RenderedRef {
    const rendered = renderTemplate(template, { variables: ref.variables ?? {}, locale: ref.locale });
    return { rendered, stamp: { id: pinned.id, version: pinned.version, locale: ref.locale } };
  }

  return {
    /**
     * The template a send names, rendered with its variables and locale. Every failure is a 400 naming the
     * send's field (`template.id`, `template.version`, `template.variables.<name>`, or the field that does not
     * render); `memo` lets a batch resolve each template it names once. A promise only when PostgreSQL must be
     * asked; a failure may then be thrown at once or rejected.
     */
    renderRef(accountId: string, ref: TemplateRefInput, memo?: PinMemo): RenderedRef | Promise<RenderedRef> {
      checkLocale('template.locale', ref.locale);
      const key = `${ref.id}@${ref.version}`;
      // The usual send: its version pinned and compiled in this process already, rendered without a promise
      // (each await was a microtask and a promise per send, a tenth of what a template adds to it).
      const known = pins.get(accountId, key);
      const hit = known === undefined ? undefined : cache.get(versionKey(known));
      if (known !== undefined && hit !== undefined) return renderWith(hit, known, ref);
      let pinning = memo?.get(key);
      if (pinning === undefined) {
        pinning = pin(accountId, ref);
        memo?.set(key, pinning);
      }
      return pinning.then(async (pinned) => renderWith(await compiled(accountId, pinned), pinned, ref));
    },

    /**
     * POST /templates/:id/render: the published version (or `version`) rendered, as a send would render it. The
     * template is a resource here, so a missing one is a 404; the errors name this request's own fields.
     */
    async render(
      accountId: string,
      idOrAlias: string,
      req: { variables?: WireJsonObject | undefined; locale: string; version: number },
    ): Promise<RenderedTemplate> {
      checkLocale('locale', req.locale);
      if (req.version !== 0) checkVersion('version', req.version);
      const pinned = await deps.templates.pin(accountId, idOrAlias, req.version === 0 ? 'published' : req.version);
      if (pinned === undefined) {
        if (req.version !== 0 && (await deps.templates.pin(accountId, idOrAlias, 'latest')))
          throw notFound('version', `${req.version} of template ${idOrAlias}`);
        throw notFound('template', idOrAlias);
      }
      return renderedAsAsked(await compiled(accountId, pinned), req);
    },

    /**
     * Content not stored (the console editor's live preview): held to a template's field rules, compiled and
     * rendered as a send would render it, nothing kept.
     */
    preview(
      content: Omit<TemplateInput, 'name' | 'alias'>,
      req: { variables?: WireJsonObject | undefined; locale: string },
    ) {
      checkLocale('locale', req.locale);
      const draft = templateDraft({ ...content, name: 'preview' });
      return renderedAsAsked(compileTemplate(draft.content), req);
    },
  };
}
export type TemplateRenderer = ReturnType<typeof createTemplateRenderer>;
