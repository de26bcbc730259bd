import type { AdminService } from '../gen/mail/v1/admin_service_pb.js';
import { renderedFields, type TemplateRenderer } from '../services/template-renderer.js';
import type { TemplatesService } from '../services/templates-service.js';
import type { CallContext, Handlers } from './call-context.js';
import { contentInput, createInput, patchInput } from './template-input.js';
import { invalid } from '../errors.js';
import { presentTemplate, presentTemplateSummary } from './template-presenters.js';

type AccountTemplateRpcs =
  | 'listAccountTemplates'
  | 'createAccountTemplate'
  | 'getAccountTemplate'
  | 'updateAccountTemplate'
  | 'getAccountTemplateVersion'
  | 'publishAccountTemplate'
  | 'deleteAccountTemplate'
  | 'renderAccountTemplate'
  | 'previewAccountTemplate';

export interface AdminTemplatesDeps {
  templates: TemplatesService;
  renderer: Pick<TemplateRenderer, 'render' | 'preview'>;
}

/** Runs a call once the admin token is admitted. */
type Admit = <T>(ctx: CallContext, run: () => Promise<T>) => Promise<T>;

/**
 * An account's templates for the console (mail.v1.AdminService): the operator acts as the account, through the
 * same use cases and rules as its API keys' template calls; an unknown account is a 404.
 */
export function adminTemplateCalls(
  deps: AdminTemplatesDeps,
  admin: Admit,
): Pick<Handlers<typeof AdminService>, AccountTemplateRpcs> {
  const { templates } = deps;
  const inAccount = <T>(ctx: CallContext, accountId: string, run: () => Promise<T>) =>
    admin(ctx, async () => {
      await templates.assertAccount(accountId);
      return run();
    });
  const body = <T>(message: T | undefined, what: string): T => {
    // The gateway always fills it from the body; a gRPC caller may leave it out.
    if (message === undefined) throw invalid(`${what} is required`);
    return message;
  };

  return {
    listAccountTemplates: (req, ctx) =>
      inAccount(ctx, req.accountId, async () => {
        const { templates: rows, total } = await templates.list(req.accountId, {
          page: req.page,
          pageSize: req.pageSize,
        });
        return { templates: rows.map(presentTemplateSummary), total };
      }),
    createAccountTemplate: (req, ctx) =>
      inAccount(ctx, req.accountId, async () =>
        presentTemplate(await templates.create(req.accountId, createInput(body(req.template, 'template')))),
      ),
    getAccountTemplate: (req, ctx) =>
      inAccount(ctx, req.accountId, async () => presentTemplate(await templates.get(req.accountId, req.id))),
    updateAccountTemplate: (req, ctx) =>
      inAccount(ctx, req.accountId, async () => {
        const patch = body(req.template, 'template');
        return presentTemplate(await templates.edit(req.accountId, patch.id, patchInput(patch)));
      }),
    getAccountTemplateVersion: (req, ctx) =>
      inAccount(ctx, req.accountId, async () =>
        presentTemplate(await templates.getVersion(req.accountId, req.id, req.version)),
      ),
    publishAccountTemplate: (req, ctx) =>
      inAccount(ctx, req.accountId, async () => {
        const p = body(req.template, 'template');
        return presentTemplate(await templates.publish(req.accountId, p.id, p.version === 0 ? undefined : p.version));
      }),
    deleteAccountTemplate: (req, ctx) =>
      inAccount(ctx, req.accountId, async () => {
        await templates.delete(req.accountId, req.id);
        return { success: true, message: `template ${req.id} deleted` };
      }),
    renderAccountTemplate: (req, ctx) =>
      inAccount(ctx, req.accountId, async () => {
        const r = body(req.template, 'template');
        return renderedFields(await deps.renderer.render(req.accountId, r.id, r));
      }),
    previewAccountTemplate: (req, ctx) =>
      inAccount(ctx, req.accountId, async () => {
        const p = body(req.preview, 'preview');
        return renderedFields(
          deps.renderer.preview(contentInput(p), { variables: p.sampleVariables, locale: p.locale }),
        );
      }),
  };
}
