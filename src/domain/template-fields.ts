import { invalid } from '../errors.js';
import type { JsonValue } from './json.js';
import { formatBytes, LIMITS } from './limits.js';
import type {
  TemplateContent,
  TemplateDraft,
  TemplateLocalization,
  TemplateLocalizations,
  TemplateVariable,
} from './entities/templates.js';

/**
 * The rules of a template's fields (CONTRACT.md "Templates"), pure: what create and edit accept, normalized into
 * the draft the repository stores. Rendering (Handlebars) is not here; a template's content is held to the same
 * limits a send's is, so that what is stored can be sent.
 */

const MiB = 1024 * 1024;

/** Where the contract is silent, these bounds are ours (the OpenAPI document reads them from here). */
export const TEMPLATE_LIMITS = {
  nameChars: 200,
  aliasChars: 64,
  variables: 100,
  variableNameChars: 64,
  /** Nesting of a variable's default (an object or array for {{#each}} / {{#with}}). */
  defaultDepth: 32,
  localizations: 50,
  localeChars: 35,
  /**
   * One version whole (subject, bodies, localizations, variables): a send's own content is at most 10 MB, and a
   * template carries a few languages of it. Every edit stores a whole version, so this also bounds what an edit
   * adds to the database.
   */
  versionBytes: 20 * MiB,
} as const;

export const TEMPLATE_ALIAS_PATTERN = /^[a-z0-9._-]{1,64}$/;
/** Ids start so; an alias may not, so that `:id` (an id or an alias) is never ambiguous. */
export const TEMPLATE_ID_PREFIX = 'tpl_';
/** A Handlebars identifier a template can name plainly (`{{first_name}}`): no path, no segment literal. */
export const TEMPLATE_VARIABLE_PATTERN = /^[A-Za-z_][A-Za-z0-9_-]*$/;
/** A BCP 47 tag as senders write them (`de`, `de-AT`, `zh-Hant-TW`); not checked against the registry. */
export const TEMPLATE_LOCALE_PATTERN = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;

/**
 * Names a template cannot declare: Handlebars' own literals and keywords, and every property of
 * Object.prototype (`constructor`, `__proto__`, `toString`, ...), which a renderer's data object would
 * otherwise appear to hold already.
 */
const RESERVED_VARIABLES = new Set(['this', 'else', 'true', 'false', 'null', 'undefined']);
const isReservedVariable = (name: string) =>
  RESERVED_VARIABLES.has(name) || Object.getOwnPropertyNames(Object.prototype).includes(name);

export interface TemplateVariableInput {
  name: string;
  /** Default true. */
  required?: boolean | undefined;
  default?: JsonValue | undefined;
}

/** The create body. An empty alias, html or text is the same as none. */
export interface TemplateInput {
  name: string;
  alias?: string | null | undefined;
  subject: string;
  html?: string | undefined;
  text?: string | undefined;
  variables?: TemplateVariableInput[] | undefined;
  localizations?: Record<string, TemplateLocalization> | undefined;
}

/** An edit: any field of the create body; a field left out keeps its value, `alias` null or '' removes the alias. */
export type TemplatePatch = Partial<TemplateInput>;

export const isTemplateId = (idOrAlias: string) => idOrAlias.startsWith(TEMPLATE_ID_PREFIX);

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');
const chars = (s: string) => [...s].length;

function tooLong(field: string, length: number, max: number, unit: string): never {
  throw invalid(`${field}: length ${length} exceeds the maximum of ${max} ${unit}`);
}

/** The alias as stored: null for none; 400 unless 1-64 of [a-z0-9._-], not starting as ids do. */
export function checkAlias(alias: string | null | undefined): string | null {
  if (alias === undefined || alias === null || alias === '') return null;
  if (!TEMPLATE_ALIAS_PATTERN.test(alias))
    throw invalid(`alias must be 1-${TEMPLATE_LIMITS.aliasChars} characters of a-z, 0-9, '.', '_' or '-'`);
  if (isTemplateId(alias)) throw invalid(`alias must not start with '${TEMPLATE_ID_PREFIX}' (template ids do)`);
  return alias;
}

function checkName(name: string): string {
  if (name.trim() === '') throw invalid('name is required');
  const n = chars(name);
  if (n > TEMPLATE_LIMITS.nameChars) tooLong('name', n, TEMPLATE_LIMITS.nameChars, 'characters');
  if (/[\0-\x1f\x7f]/.test(name)) throw invalid('name must not contain control characters or line breaks');
  return name;
}

/** A subject as sends take it: up to 998 characters on one line. */
function checkSubject(field: string, subject: string): void {
  const n = chars(subject);
  if (n > LIMITS.subjectChars) tooLong(field, n, LIMITS.subjectChars, 'characters');
  if (/[\r\n\0]/.test(subject)) throw invalid(`${field} must not contain line breaks`);
}

function checkBody(field: string, body: string, max: number): number {
  const n = bytes(body);
  if (n > max) tooLong(field, n, max, `bytes (${formatBytes(max)})`);
  return n;
}

/** A default is plain JSON, nested at most TEMPLATE_LIMITS.defaultDepth deep (checked before any deeper walk). */
function checkDefault(field: string, value: unknown, depth = 0): void {
  if (depth > TEMPLATE_LIMITS.defaultDepth)
    throw invalid(`${field} is nested deeper than ${TEMPLATE_LIMITS.defaultDepth} levels`);
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw invalid(`${field} must be a finite number`);
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) checkDefault(field, item, depth + 1);
    return;
  }
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    for (const item of Object.values(value)) checkDefault(field, item, depth + 1);
    return;
  }
  throw invalid(`${field} must be a JSON value`);
}

function checkVariables(variables: readonly TemplateVariableInput[]): TemplateVariable[] {
  if (variables.length > TEMPLATE_LIMITS.variables)
    throw invalid(`variables: ${variables.length} exceed the maximum of ${TEMPLATE_LIMITS.variables}`);
  const seen = new Set<string>();
  return variables.map((v, i) => {
    const field = `variables[${i}]`;
    const name = v.name;
    if (name === '') throw invalid(`${field}.name is required`);
    if (name.length > TEMPLATE_LIMITS.variableNameChars)
      tooLong(`${field}.name`, name.length, TEMPLATE_LIMITS.variableNameChars, 'characters');
    if (!TEMPLATE_VARIABLE_PATTERN.test(name))
      throw invalid(
        `${field}.name must be a Handlebars identifier: a letter or '_', then letters, digits, '_' or '-' (got ${JSON.stringify(name)})`,
      );
    if (isReservedVariable(name)) throw invalid(`${field}.name ${JSON.stringify(name)} is reserved`);
    if (seen.has(name)) throw invalid(`${field}.name ${JSON.stringify(name)} is declared twice`);
    seen.add(name);
    const variable: TemplateVariable = { name, required: v.required ?? true };
    if (v.default !== undefined) {
      checkDefault(`${field}.default`, v.default);
      variable.default = v.default;
    }
    return variable;
  });
}

function checkLocalizations(localizations: Record<string, TemplateLocalization>): TemplateLocalizations {
  const tags = Object.keys(localizations);
  if (tags.length > TEMPLATE_LIMITS.localizations)
    throw invalid(`localizations: ${tags.length} locales exceed the maximum of ${TEMPLATE_LIMITS.localizations}`);
  const seen = new Map<string, string>();
  // Tags are checked before they become keys: none can be `__proto__` or another inherited name.
  const out: TemplateLocalizations = {};
  for (const tag of tags) {
    const field = `localizations.${tag}`;
    if (tag.length > TEMPLATE_LIMITS.localeChars || !TEMPLATE_LOCALE_PATTERN.test(tag))
      throw invalid(
        `${field}: ${JSON.stringify(tag)} is not a locale: give a language tag such as "de" or "de-AT" (at most ${TEMPLATE_LIMITS.localeChars} characters)`,
      );
    const key = tag.toLowerCase();
    const twin = seen.get(key);
    if (twin !== undefined) throw invalid(`${field}: the same locale as localizations.${twin} (tags ignore case)`);
    seen.set(key, tag);
    const given = localizations[tag] ?? {};
    const one: TemplateLocalization = {};
    // An empty field is the same as none: it falls back on the language's, then the template's own.
    if (given.subject) {
      checkSubject(`${field}.subject`, given.subject);
      one.subject = given.subject;
    }
    if (given.html) {
      checkBody(`${field}.html`, given.html, LIMITS.htmlBytes);
      one.html = given.html;
    }
    if (given.text) {
      checkBody(`${field}.text`, given.text, LIMITS.textBytes);
      one.text = given.text;
    }
    out[tag] = one;
  }
  return out;
}

/** One version's content, checked field by field and as a whole. */
function checkContent(input: {
  subject: string;
  html: string;
  text: string;
  variables: readonly TemplateVariableInput[];
  localizations: Record<string, TemplateLocalization>;
}): TemplateContent {
  if (input.subject === '') throw invalid('subject is required');
  checkSubject('subject', input.subject);
  if (input.html === '' && input.text === '') throw invalid('html or text is required: give at least one');
  checkBody('html', input.html, LIMITS.htmlBytes);
  checkBody('text', input.text, LIMITS.textBytes);
  const content: TemplateContent = {
    subject: input.subject,
    html: input.html,
    text: input.text,
    variables: checkVariables(input.variables),
    localizations: checkLocalizations(input.localizations),
  };
  const total = versionBytes(content);
  if (total > TEMPLATE_LIMITS.versionBytes)
    throw invalid(
      `the template is ${total} bytes (subject, html, text, variables and localizations together); the maximum is ${formatBytes(TEMPLATE_LIMITS.versionBytes)}`,
    );
  return content;
}

/** What a version weighs as stored, in bytes. */
export function versionBytes(c: TemplateContent): number {
  let n = bytes(c.subject) + bytes(c.html) + bytes(c.text) + bytes(JSON.stringify(c.variables));
  for (const [tag, l] of Object.entries(c.localizations))
    n += bytes(tag) + bytes(l.subject ?? '') + bytes(l.html ?? '') + bytes(l.text ?? '');
  return n;
}

/** A create body as the draft to store: 400 naming the first field that is wrong. */
export function templateDraft(input: TemplateInput): TemplateDraft {
  return {
    name: checkName(input.name),
    alias: checkAlias(input.alias),
    content: checkContent({
      subject: input.subject,
      html: input.html ?? '',
      text: input.text ?? '',
      variables: input.variables ?? [],
      localizations: input.localizations ?? {},
    }),
  };
}

/**
 * An edit applied to the current draft: the fields it gives replace the current ones (variables and
 * localizations whole), and the result is checked as a create is.
 */
export function patchedDraft(current: TemplateDraft, patch: TemplatePatch): TemplateDraft {
  const c = current.content;
  return templateDraft({
    name: patch.name ?? current.name,
    alias: patch.alias === undefined ? current.alias : patch.alias,
    subject: patch.subject ?? c.subject,
    html: patch.html ?? c.html,
    text: patch.text ?? c.text,
    variables: patch.variables ?? c.variables,
    localizations: patch.localizations ?? c.localizations,
  });
}

/** A version number as a path or body gives it: 400 naming `field` unless a whole number the table can hold. */
export function checkVersion(field: string, version: number): number {
  if (!Number.isSafeInteger(version) || version < 1 || version > 2_147_483_647)
    throw invalid(`${field} must be a whole number from 1, got ${version}`);
  return version;
}
