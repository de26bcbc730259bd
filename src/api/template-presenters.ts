import { fromJson, type JsonValue as WireJson, type MessageInitShape } from '@bufbuild/protobuf';
import { ValueSchema } from '@bufbuild/protobuf/wkt';
import type { Template, TemplateSummary } from '../domain/entities/templates.js';
import type { TemplateSchema, TemplateSummarySchema } from '../gen/mail/v1/templates_pb.js';
import { iso } from './presenters.js';

/** Stored templates as the schema's messages (CONTRACT.md "Templates"). */

export function presentTemplate(t: Template): MessageInitShape<typeof TemplateSchema> {
  return {
    id: t.id,
    name: t.name,
    ...(t.alias !== null ? { alias: t.alias } : {}),
    subject: t.subject,
    html: t.html,
    text: t.text,
    variables: t.variables.map((v) => ({
      name: v.name,
      required: v.required,
      ...(v.default !== undefined ? { default: fromJson(ValueSchema, v.default as WireJson) } : {}),
    })),
    localizations: t.localizations,
    version: t.version,
    publishedVersion: t.publishedVersion,
    latestVersion: t.latestVersion,
    createdAt: iso(t.createdAt),
    updatedAt: iso(t.updatedAt),
  };
}

export function presentTemplateSummary(t: TemplateSummary): MessageInitShape<typeof TemplateSummarySchema> {
  return {
    id: t.id,
    name: t.name,
    ...(t.alias !== null ? { alias: t.alias } : {}),
    subject: t.subject,
    version: t.latestVersion,
    publishedVersion: t.publishedVersion,
    createdAt: iso(t.createdAt),
    updatedAt: iso(t.updatedAt),
  };
}
