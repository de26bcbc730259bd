import type { TemplateRefInput } from '../domain/entities/templates.js';
import { validateDraft, type EmailDraft, type ValidDraft } from '../domain/email-draft.js';
import { AppError, invalid } from '../errors.js';
import { renderedFields, type PinMemo, type RenderedRef, type TemplateRenderer } from './template-renderer.js';

/**
 * A send request made into the email to store: its template, if it names one, rendered into its subject and
 * bodies, then every rule of a send checked on the result (size, headers, addresses). POST /emails,
 * /emails/schedule and each item of /emails/batch go through here, so a templated email is held to exactly the
 * rules of one written by hand.
 */
export function createDraftPreparer(renderer: Pick<TemplateRenderer, 'renderRef'>) {
  /** Prefixes a 400 with the item it is about (`emails[3].template.variables.name is required`). */
  const within = (prefix: string, err: unknown): unknown =>
    prefix !== '' && err instanceof AppError && err.kind === 'validation'
      ? new AppError('validation', `${prefix}${err.message}`, { cause: err })
      : err;

  /** The draft with its template's render in place of its (empty) subject and bodies, checked as any draft. */
  const withRender = (draft: EmailDraft, { rendered: r, stamp }: RenderedRef, prefix: string): ValidDraft => ({
    ...validateDraft({ ...draft, ...renderedFields(r) }, prefix),
    template: stamp,
  });

  /** Without a promise when the renderer needs none (renderRef: the version known in this process). */
  function prepareTemplated(
    accountId: string,
    draft: EmailDraft,
    ref: TemplateRefInput,
    prefix: string,
    memo: PinMemo | undefined,
  ): ValidDraft | Promise<ValidDraft> {
    let r: RenderedRef | Promise<RenderedRef>;
    try {
      if (draft.subject !== '' || draft.html !== '' || draft.text !== '')
        throw invalid('template: give either a template or subject, html and text, not both');
      r = renderer.renderRef(accountId, ref, memo);
    } catch (err) {
      throw within(prefix, err);
    }
    if (!(r instanceof Promise)) return withRender(draft, r, prefix);
    return r.then(
      (done) => withRender(draft, done, prefix),
      (err: unknown) => {
        throw within(prefix, err);
      },
    );
  }

  /** The draft checked; a send without a template is checked at once, with no promise of its own. */
  function prepare(
    accountId: string,
    draft: EmailDraft,
    prefix = '',
    memo?: PinMemo,
  ): ValidDraft | Promise<ValidDraft> {
    const ref = draft.template;
    if (ref === undefined) return validateDraft(draft, prefix);
    return prepareTemplated(accountId, draft, ref, prefix, memo);
  }

  return {
    prepare,

    /**
     * Every item of a batch, in order, so that a refusal names the first bad item; each template the batch
     * names is resolved once.
     */
    async prepareAll(accountId: string, drafts: EmailDraft[]): Promise<ValidDraft[]> {
      const memo: PinMemo = new Map();
      const valid: ValidDraft[] = [];
      for (const [i, d] of drafts.entries()) valid.push(await prepare(accountId, d, `emails[${i}].`, memo));
      return valid;
    },
  };
}
export type DraftPreparer = ReturnType<typeof createDraftPreparer>;
