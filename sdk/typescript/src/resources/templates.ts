import type { MessageInitShape } from '@bufbuild/protobuf';
import { EmailService } from '../gen/mail/v1/email_service_pb.js';
import type {
  CreateTemplateRequestSchema,
  DeleteTemplateResponse,
  ListTemplatesRequestSchema,
  ListTemplatesResponse,
  PreviewTemplateRequestSchema,
  RenderTemplateRequestSchema,
  RenderTemplateResponse,
  Template,
  UpdateTemplateRequestSchema,
} from '../gen/mail/v1/templates_pb.js';
import type { Call, InputWithout, RequestOptions } from '../transport.js';

const rpc = EmailService.method;

/** `mailer.templates`: stored, versioned Handlebars templates; send one with `template: { id, variables }`. */
export class Templates {
  constructor(private readonly call: Call) {}

  /** Creates a template: version 1, published (POST /templates). */
  create(template: MessageInitShape<typeof CreateTemplateRequestSchema>, options?: RequestOptions): Promise<Template> {
    return this.call(rpc.createTemplate, template, 'unsafe', options);
  }

  /** GET /templates (page, pageSize), newest first. */
  list(
    query: MessageInitShape<typeof ListTemplatesRequestSchema> = {},
    options?: RequestOptions,
  ): Promise<ListTemplatesResponse> {
    return this.call(rpc.listTemplates, query, 'safe', options);
  }

  /** A template's latest version, by id or alias. */
  get(idOrAlias: string, options?: RequestOptions): Promise<Template> {
    return this.call(rpc.getTemplate, { id: idOrAlias }, 'safe', options);
  }

  /** One version of a template. */
  getVersion(idOrAlias: string, version: number, options?: RequestOptions): Promise<Template> {
    return this.call(rpc.getTemplateVersion, { id: idOrAlias, version }, 'safe', options);
  }

  /** Edits a template: a new version, which sends use once it is published (PATCH /templates/:id). */
  update(
    idOrAlias: string,
    changes: InputWithout<typeof UpdateTemplateRequestSchema, 'id'>,
    options?: RequestOptions,
  ): Promise<Template> {
    return this.call(rpc.updateTemplate, { ...changes, id: idOrAlias }, 'unsafe', options);
  }

  /** Makes a version (default: the latest) the one sends use. */
  publish(idOrAlias: string, version = 0, options?: RequestOptions): Promise<Template> {
    return this.call(rpc.publishTemplate, { id: idOrAlias, version }, 'safe', options);
  }

  /** Deletes a template; sends naming it are refused from then on. */
  delete(idOrAlias: string, options?: RequestOptions): Promise<DeleteTemplateResponse> {
    return this.call(rpc.deleteTemplate, { id: idOrAlias }, 'safe', options);
  }

  /** Renders the published version (or `version`) with `variables`, as a send would, without sending. */
  render(
    idOrAlias: string,
    input: InputWithout<typeof RenderTemplateRequestSchema, 'id'> = {},
    options?: RequestOptions,
  ): Promise<RenderTemplateResponse> {
    return this.call(rpc.renderTemplate, { ...input, id: idOrAlias }, 'safe', options);
  }

  /** Renders content that is not stored (POST /template-preview), as a send would. */
  preview(
    content: MessageInitShape<typeof PreviewTemplateRequestSchema>,
    options?: RequestOptions,
  ): Promise<RenderTemplateResponse> {
    return this.call(rpc.previewTemplate, content, 'safe', options);
  }
}
