import type { EmailService } from '../gen/mail/v1/email_service_pb.js';
import { renderedFields, type TemplateRenderer } from '../services/template-renderer.js';
import type { TemplatesService } from '../services/templates-service.js';
import type { Handlers } from './call-context.js';
import { permitting, type Guard } from './guard.js';
import { createInput, patchInput } from './template-input.js';
import { presentTemplate, presentTemplateSummary } from './template-presenters.js';

type TemplateRpcs =
  | 'createTemplate'
  | 'listTemplates'
  | 'getTemplate'
  | 'updateTemplate'
  | 'getTemplateVersion'
  | 'publishTemplate'
  | 'deleteTemplate'
  | 'renderTemplate';

export interface TemplatesApiDeps {
  guard: Guard;
  templates: TemplatesService;
  renderer: Pick<TemplateRenderer, 'render'>;
}

/**
 * The template RPCs of mail.v1.EmailService (CONTRACT.md "Templates"). Changing a template needs a key with
 * permission `all`, since every later send renders it; reading and rendering one, any key (every permission
 * reads, and a send_only key renders what it sends).
 */
export function createTemplatesApi(deps: TemplatesApiDeps): Pick<Handlers<typeof EmailService>, TemplateRpcs> {
  const { templates } = deps;
  const manage = permitting(deps.guard, 'manage_templates');
  const read = permitting(deps.guard, 'read');

  return {
    createTemplate: (req, ctx) =>
      manage(ctx, async (a) => presentTemplate(await templates.create(a, createInput(req)))),
    listTemplates: (req, ctx) =>
      read(ctx, async (a) => {
        const { templates: rows, total } = await templates.list(a, { page: req.page, pageSize: req.pageSize });
        return { templates: rows.map(presentTemplateSummary), total };
      }),
    getTemplate: (req, ctx) => read(ctx, async (a) => presentTemplate(await templates.get(a, req.id))),
    updateTemplate: (req, ctx) =>
      manage(ctx, async (a) => presentTemplate(await templates.edit(a, req.id, patchInput(req)))),
    getTemplateVersion: (req, ctx) =>
      read(ctx, async (a) => presentTemplate(await templates.getVersion(a, req.id, req.version))),
    publishTemplate: (req, ctx) =>
      manage(ctx, async (a) =>
        presentTemplate(await templates.publish(a, req.id, req.version === 0 ? undefined : req.version)),
      ),
    deleteTemplate: (req, ctx) =>
      manage(ctx, async (a) => {
        await templates.delete(a, req.id);
        return { success: true, message: `template ${req.id} deleted` };
      }),
    renderTemplate: (req, ctx) =>
      read(ctx, async (a) => {
        return renderedFields(await deps.renderer.render(a, req.id, req));
      }),
  };
}
