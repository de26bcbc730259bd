import fs from 'node:fs/promises';
import { Flags } from '@oclif/core';
import { usageError } from './base-command.js';
import { idArg } from './define-command.js';

// The command-line side of templates (CONTRACT.md "Templates"): the content flags of `templates create` and
// `templates edit`, and the flags naming a template and its variables for `templates render`, `emails send` and
// `scheduled create`. Everything here is plain JSON; the commands turn it into request messages at run time.

/** A JSON value as JSON.parse answers it. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

const CONTENT_FLAGS = [
  'name',
  'alias',
  'subject',
  'html',
  'html-file',
  'text',
  'text-file',
  'variables-file',
  'localizations-file',
];

/** The argument of the commands about one template: its id or its alias, as the API takes either. */
export const templateArg = idArg('Template id (tpl_...) or alias.');

/**
 * The content of a template, as flags: `create` requires --name and --subject; `edit` requires at least one of
 * them all, and sends only those given.
 */
export function templateContentFlags(mode: 'create' | 'edit') {
  const required = mode === 'create';
  const some = mode === 'edit' ? { atLeastOne: CONTENT_FLAGS } : {};
  return {
    name: Flags.string({
      summary: 'Name of the template (for people; sends name its id or alias).',
      required,
      ...some,
    }),
    alias: Flags.string({
      summary: 'Alias a send may name instead of the id: 1-64 of a-z 0-9 . _ -, unique in the account.',
      ...some,
    }),
    subject: Flags.string({
      char: 's',
      summary: 'Subject, in Handlebars ({{name}}); nothing is escaped.',
      required,
      ...some,
    }),
    html: Flags.string({
      summary: 'HTML body, in Handlebars: {{x}} is HTML-escaped, {{{x}}} is not.',
      exclusive: ['html-file'],
      ...some,
    }),
    'html-file': Flags.string({ summary: 'Read the HTML body from this file.', exclusive: ['html'], ...some }),
    text: Flags.string({
      summary: 'Plain-text body, in Handlebars; nothing is escaped.',
      exclusive: ['text-file'],
      ...some,
    }),
    'text-file': Flags.string({ summary: 'Read the plain-text body from this file.', exclusive: ['text'], ...some }),
    'variables-file': Flags.string({
      summary: 'JSON file declaring the variables: [{"name": "...", "required"?: false, "default"?: <any JSON>}].',
      ...some,
    }),
    'localizations-file': Flags.string({
      summary: 'JSON file of per-locale overrides: {"de": {"subject"?: "...", "html"?: "...", "text"?: "..."}}.',
      ...some,
    }),
  };
}

export interface TemplateContentFlagValues {
  name?: string | undefined;
  alias?: string | undefined;
  subject?: string | undefined;
  html?: string | undefined;
  'html-file'?: string | undefined;
  text?: string | undefined;
  'text-file'?: string | undefined;
  'variables-file'?: string | undefined;
  'localizations-file'?: string | undefined;
}

/**
 * The fields the flags give, in the API's JSON form (the body of POST or PATCH /templates): files read and their
 * JSON checked, a field whose flag is absent left out (so that an edit changes only what was given).
 */
export async function templateContentFromFlags(f: TemplateContentFlagValues): Promise<JsonObject> {
  const body: JsonObject = {};
  if (f.name !== undefined) body.name = f.name;
  if (f.alias !== undefined) body.alias = f.alias;
  if (f.subject !== undefined) body.subject = f.subject;
  if (f['html-file'] !== undefined) body.html = await readText(f['html-file'], '--html-file');
  else if (f.html !== undefined) body.html = f.html;
  if (f['text-file'] !== undefined) body.text = await readText(f['text-file'], '--text-file');
  else if (f.text !== undefined) body.text = f.text;
  if (f['variables-file'] !== undefined)
    body.variables = checkDeclarations(await readJson(f['variables-file'], '--variables-file'), '--variables-file');
  if (f['localizations-file'] !== undefined)
    body.localizations = checkLocalizations(
      await readJson(f['localizations-file'], '--localizations-file'),
      '--localizations-file',
    );
  return body;
}

/** A variables declaration file: a list of `{name, required?, default?}`, exactly as the API takes it. */
export function checkDeclarations(value: Json, flag: string): Json[] {
  if (!Array.isArray(value))
    throw usageError(`${flag} must hold a JSON list of {"name", "required"?, "default"?}, got ${kind(value)}`);
  value.forEach((item, i) => {
    const at = `${flag}: item ${i}`;
    if (!isObject(item)) throw usageError(`${at} must be an object {"name", "required"?, "default"?}`);
    for (const key of Object.keys(item))
      if (!['name', 'required', 'default'].includes(key)) throw usageError(`${at} has an unknown field "${key}"`);
    if (typeof item.name !== 'string' || item.name === '') throw usageError(`${at} needs a "name" (a string)`);
    if (item.required !== undefined && typeof item.required !== 'boolean')
      throw usageError(`${at}: "required" must be true or false`);
  });
  return value;
}

/** A localizations file: an object of locale → `{subject?, html?, text?}` (strings), as the API takes it. */
export function checkLocalizations(value: Json, flag: string): JsonObject {
  if (!isObject(value))
    throw usageError(
      `${flag} must hold a JSON object {"<locale>": {"subject"?, "html"?, "text"?}}, got ${kind(value)}`,
    );
  for (const [locale, l] of Object.entries(value)) {
    const at = `${flag}: "${locale}"`;
    if (!isObject(l)) throw usageError(`${at} must be an object {"subject"?, "html"?, "text"?}`);
    for (const [key, v] of Object.entries(l)) {
      if (!['subject', 'html', 'text'].includes(key)) throw usageError(`${at} has an unknown field "${key}"`);
      if (typeof v !== 'string') throw usageError(`${at}.${key} must be a string`);
    }
  }
  return value;
}

/** The flags of the variables and locale a render or a send renders with; `also` adds to each (a send's group). */
function variableFlags(also: { dependsOn?: string[]; helpGroup?: string }) {
  return {
    var: Flags.string({
      summary:
        'A variable `name=value` (repeatable; the value is a string; `a.b=value` sets b in object a). ' +
        'It adds to (or overrides) --variables or --variables-file.',
      multiple: true,
      // One value a flag, so that a command's argument after --var x=1 stays its argument.
      multipleNonGreedy: true,
      ...also,
    }),
    variables: Flags.string({
      summary: 'The variables as a JSON object, e.g. \'{"name": "Ann", "items": [1, 2]}\'.',
      exclusive: ['variables-file'],
      ...also,
    }),
    'variables-file': Flags.string({
      summary: 'Read the variables (a JSON object) from this file.',
      exclusive: ['variables'],
      ...also,
    }),
    locale: Flags.string({
      summary: 'Locale (BCP 47, e.g. de-AT): its localization, then its language (de), then the template.',
      ...also,
    }),
  };
}

/** The flags of `templates render`: the variables, the locale and the version. */
export const renderFlags = {
  ...variableFlags({}),
  version: Flags.integer({ summary: 'Render this version (default: the published one).', min: 1 }),
};

/** The flags of a send (`emails send`, `scheduled create`) that names a template instead of its own content. */
export function sendTemplateFlags(contentFlags: string[]) {
  const also = { dependsOn: ['template'], helpGroup: 'TEMPLATE' };
  return {
    template: Flags.string({
      summary:
        'Send this template (its id, tpl_..., or alias), rendered with --var/--variables, instead of a subject and bodies.',
      exclusive: contentFlags,
      helpGroup: 'TEMPLATE',
    }),
    ...variableFlags(also),
    'template-version': Flags.integer({
      summary: 'Render this version of the template (default: the published one).',
      min: 1,
      ...also,
    }),
  };
}

export interface SendTemplateFlagValues extends RenderFlagValues {
  template?: string | undefined;
  locale?: string | undefined;
  'template-version'?: number | undefined;
}

/** The `template` of a send request the flags describe, or undefined when --template is not given. */
export async function templateRefFromFlags(
  f: SendTemplateFlagValues,
): Promise<{ id: string; variables: JsonObject | undefined; locale: string; version: number } | undefined> {
  if (f.template === undefined) return undefined;
  return {
    id: f.template,
    variables: await variablesFromFlags(f),
    locale: f.locale ?? '',
    version: f['template-version'] ?? 0,
  };
}

/**
 * A batch CSV row's template (`batches send --file`): its `template` cell (id or alias; empty: none), then
 * `template_version`, `locale`, `variables` (a JSON object) and one `var:<name>` cell per variable (dotted names
 * nest, as --var's), given here as `name=value` specs. `where` names the row in messages.
 */
export function templateRefFromCells(
  cells: { template: string; version: string; locale: string; variables: string; vars: string[] },
  where: string,
): { id: string; variables: JsonObject | undefined; locale: string; version: number } | undefined {
  if (cells.template === '') {
    if (cells.version !== '' || cells.locale !== '' || cells.variables !== '' || cells.vars.length > 0)
      throw usageError(`${where}: template_version, locale, variables and var: cells need a template cell`);
    return undefined;
  }
  if (cells.version !== '' && !/^[1-9]\d{0,8}$/.test(cells.version))
    throw usageError(`${where}: template_version must be a version number (1, 2, ...), got "${cells.version}"`);
  const base =
    cells.variables === ''
      ? undefined
      : objectOf(parseJson(cells.variables, `${where}: variables`), `${where}: variables`);
  const variables = cells.vars.length === 0 ? base : applyVars(base ?? {}, cells.vars);
  return {
    id: cells.template,
    variables,
    locale: cells.locale,
    version: cells.version === '' ? 0 : Number(cells.version),
  };
}

export interface RenderFlagValues {
  var?: string[] | undefined;
  variables?: string | undefined;
  'variables-file'?: string | undefined;
}

/** The variables the flags give: --variables or --variables-file, then each --var over them; undefined if none. */
export async function variablesFromFlags(f: RenderFlagValues): Promise<JsonObject | undefined> {
  let base: JsonObject | undefined;
  if (f.variables !== undefined) base = objectOf(parseJson(f.variables, '--variables'), '--variables');
  else if (f['variables-file'] !== undefined)
    base = objectOf(await readJson(f['variables-file'], '--variables-file'), '--variables-file');
  if (f.var === undefined || f.var.length === 0) return base;
  return applyVars(base ?? {}, f.var);
}

/**
 * `name=value` pairs set into `into` (a copy): the value is a string, a dotted name sets a property of an object
 * (`user.name=Ann` → `{user: {name: "Ann"}}`), as Handlebars reads `{{user.name}}`.
 */
export function applyVars(into: JsonObject, specs: string[]): JsonObject {
  const out = structuredClone(into);
  for (const spec of specs) {
    const eq = spec.indexOf('=');
    if (eq <= 0) throw usageError(`--var must be "name=value", got "${spec}"`);
    const path = spec.slice(0, eq).split('.');
    if (path.some((p) => p === '')) throw usageError(`--var: "${spec.slice(0, eq)}" is not a variable name`);
    let at: JsonObject = out;
    for (const [i, key] of path.slice(0, -1).entries()) {
      const next = Object.hasOwn(at, key) ? at[key] : undefined;
      if (next === undefined) {
        const made: JsonObject = {};
        setOwn(at, key, made);
        at = made;
      } else if (isObject(next)) at = next;
      else
        throw usageError(
          `--var ${spec}: ${path.slice(0, i + 1).join('.')} is already ${kind(next)}, not an object to set ${path[i + 1]} in`,
        );
    }
    setOwn(at, path[path.length - 1]!, spec.slice(eq + 1));
  }
  return out;
}

// defineProperty: a name such as __proto__ becomes a variable of that name (refused or ignored by the server),
// never the object's prototype.
function setOwn(o: JsonObject, key: string, value: Json): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

function objectOf(value: Json, flag: string): JsonObject {
  if (!isObject(value)) throw usageError(`${flag} must be a JSON object {"name": value, ...}, got ${kind(value)}`);
  return value;
}

const isObject = (v: Json | undefined): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

const kind = (v: Json): string =>
  v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'an object' : `a ${typeof v}`;

function parseJson(text: string, flag: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch (err) {
    throw usageError(`${flag} is not JSON: ${(err as Error).message}`);
  }
}

async function readJson(file: string, flag: string): Promise<Json> {
  return parseJson(await readText(file, flag), `${flag} ${file}`);
}

async function readText(file: string, flag: string): Promise<string> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch (err) {
    throw usageError(`${flag}: cannot read ${file}: ${(err as Error).message}`);
  }
}
