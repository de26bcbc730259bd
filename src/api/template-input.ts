import { toJson, type JsonValue as WireJson } from '@bufbuild/protobuf';
import { ListValueSchema, ValueSchema, type ListValue } from '@bufbuild/protobuf/wkt';
import type { TemplateLocalization } from '../domain/entities/templates.js';
import type { TemplateInput, TemplatePatch, TemplateVariableInput } from '../domain/template-fields.js';
import { invalid } from '../errors.js';
import type {
  CreateTemplateRequest,
  TemplateLocalization as WireLocalization,
  TemplateVariable as WireVariable,
  UpdateTemplateRequest,
} from '../gen/mail/v1/templates_pb.js';

/**
 * Template requests as the templates service takes them. Create's fields are typed messages; an edit's
 * `variables` and `localizations` arrive as plain JSON (the proto says why), so their shape is checked here, with
 * 400s naming the field as the JSON does; every other rule is domain/template-fields.ts's.
 */

const variableFromWire = (v: WireVariable): TemplateVariableInput => ({
  name: v.name,
  required: v.required,
  default: v.default === undefined ? undefined : toJson(ValueSchema, v.default),
});

const localizationFromWire = (l: WireLocalization): TemplateLocalization => ({
  ...(l.subject !== undefined ? { subject: l.subject } : {}),
  ...(l.html !== undefined ? { html: l.html } : {}),
  ...(l.text !== undefined ? { text: l.text } : {}),
});

/** A version's content as a create (or a preview) gives it. */
export function contentInput(
  req: Pick<CreateTemplateRequest, 'subject' | 'html' | 'text' | 'variables' | 'localizations'>,
): Omit<TemplateInput, 'name' | 'alias'> {
  return {
    subject: req.subject,
    html: req.html,
    text: req.text,
    variables: req.variables.map(variableFromWire),
    localizations: Object.fromEntries(
      Object.entries(req.localizations).map(([tag, l]) => [tag, localizationFromWire(l)]),
    ),
  };
}

export const createInput = (req: CreateTemplateRequest): TemplateInput => ({
  name: req.name,
  alias: req.alias,
  ...contentInput(req),
});

const isObject = (v: WireJson | undefined): v is { [k: string]: WireJson } =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function onlyKeys(field: string, o: { [k: string]: WireJson }, allowed: readonly string[]): void {
  for (const key of Object.keys(o))
    if (!allowed.includes(key)) throw invalid(`${field}: unknown field ${JSON.stringify(key)}`);
}

function optionalString(field: string, v: WireJson | undefined): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw invalid(`${field} must be a string`);
  return v;
}

function variablesFromJson(list: ListValue): TemplateVariableInput[] {
  const items = toJson(ListValueSchema, list) as WireJson[];
  return items.map((item, i) => {
    const field = `variables[${i}]`;
    if (!isObject(item)) throw invalid(`${field} must be an object {name, required?, default?}`);
    onlyKeys(field, item, ['name', 'required', 'default']);
    const required = item.required;
    if (required !== undefined && required !== null && typeof required !== 'boolean')
      throw invalid(`${field}.required must be true or false`);
    return {
      name: optionalString(`${field}.name`, item.name) ?? '',
      required: typeof required === 'boolean' ? required : undefined,
      default: item.default,
    };
  });
}

function localizationsFromJson(o: { [k: string]: WireJson }): Record<string, TemplateLocalization> {
  const out: Record<string, TemplateLocalization> = {};
  for (const [tag, l] of Object.entries(o)) {
    const field = `localizations.${tag}`;
    if (!isObject(l)) throw invalid(`${field} must be an object {subject?, html?, text?}`);
    onlyKeys(field, l, ['subject', 'html', 'text']);
    const subject = optionalString(`${field}.subject`, l.subject);
    const html = optionalString(`${field}.html`, l.html);
    const text = optionalString(`${field}.text`, l.text);
    // Object.defineProperty: a tag named __proto__ must become a key (and be refused as no locale), not a prototype.
    Object.defineProperty(out, tag, {
      value: { ...(subject ? { subject } : {}), ...(html ? { html } : {}), ...(text ? { text } : {}) },
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

export function patchInput(req: UpdateTemplateRequest): TemplatePatch {
  const patch: TemplatePatch = {};
  if (req.name !== undefined) patch.name = req.name;
  if (req.alias !== undefined) patch.alias = req.alias;
  if (req.subject !== undefined) patch.subject = req.subject;
  if (req.html !== undefined) patch.html = req.html;
  if (req.text !== undefined) patch.text = req.text;
  if (req.variables !== undefined) patch.variables = variablesFromJson(req.variables);
  if (req.localizations !== undefined) patch.localizations = localizationsFromJson(req.localizations);
  return patch;
}
