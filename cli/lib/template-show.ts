import type { Value } from '@bufbuild/protobuf/wkt';
import type { RenderTemplateResponse, Template, TemplateSummary } from '../../src/gen/mail/v1/templates_pb.js';
import { clip, fields, list } from './format.js';

// Human renderings of templates, shared by the template commands.

/** What `published` says of a version: sends use the published one, so an unpublished edit is pointed out. */
const publishedNote = (version: number, published: number): string =>
  version === published ? `${published} (this version)` : `${published} (sends use it, not version ${version})`;

/**
 * A template at one version: its fields, its variables and locales, and with `bodies` its html and text in full
 * (`templates get`); without, their sizes (what create, edit and publish answer).
 */
export function showTemplate(t: Template, { bodies }: { bodies: boolean }): string {
  const size = (s: string) => (s ? `${Buffer.byteLength(s)} bytes` : '(none)');
  const variables = t.variables.map((v) => {
    const notes = [
      ...(v.required === false ? ['optional'] : []),
      ...(v.default !== undefined ? [`default ${JSON.stringify(valueJson(v.default))}`] : []),
    ];
    return notes.length ? `${v.name} (${notes.join(', ')})` : v.name;
  });
  const parts = [
    fields([
      ['id', t.id],
      ['name', t.name],
      ['alias', t.alias ?? '(none)'],
      ['version', t.version],
      ['latest_version', t.latestVersion],
      ['published_version', publishedNote(t.version, t.publishedVersion)],
      ['subject', t.subject],
      ['variables', variables.length ? list(variables) : '(none declared)'],
      ['locales', Object.keys(t.localizations).length ? list(Object.keys(t.localizations).sort()) : undefined],
      ['created_at', t.createdAt],
      ['updated_at', t.updatedAt],
      ['html', bodies ? undefined : size(t.html)],
      ['text', bodies ? undefined : size(t.text)],
    ]),
  ];
  if (bodies) parts.push(...bodySections(t));
  return parts.join('\n');
}

/** A google.protobuf.Value as the JSON it stands for (protobuf's toJson would load its runtime for --help too). */
function valueJson(v: Value): unknown {
  switch (v.kind.case) {
    case 'structValue':
      return Object.fromEntries(Object.entries(v.kind.value.fields).map(([k, f]) => [k, valueJson(f)]));
    case 'listValue':
      return v.kind.value.values.map(valueJson);
    case 'nullValue':
    case undefined:
      return null;
    default:
      return v.kind.value;
  }
}

/** A template's (or a render's) bodies as `--- html ---` and `--- text ---` sections, those that are not empty. */
function bodySections(b: { html: string; text: string }): string[] {
  return [
    ...(b.html ? ['', '--- html ---', b.html.trimEnd()] : []),
    ...(b.text ? ['', '--- text ---', b.text.trimEnd()] : []),
  ];
}

/** What `templates render` prints: the subject, then each body in full. */
export function showRendered(r: RenderTemplateResponse): string {
  return [fields([['subject', r.subject]]), ...bodySections(r)].join('\n');
}

export const TEMPLATE_HEADERS = ['ID', 'ALIAS', 'NAME', 'SUBJECT', 'VERSION', 'PUBLISHED', 'UPDATED'];

export const templateRows = (templates: TemplateSummary[]): string[][] =>
  templates.map((t) => [
    t.id,
    t.alias ?? '',
    clip(t.name, 32),
    clip(t.subject, 40),
    String(t.version),
    String(t.publishedVersion),
    t.updatedAt,
  ]);
