import Handlebars from 'handlebars';
import { AppError, invalid } from '../errors.js';
import type { JsonValue } from '../domain/json.js';
import { MAX_RENDER_STEPS, RenderBudget, type RenderedField } from './render-budget.js';
import { compileProgram, renderProgram, type CompiledProgram } from './template-interpreter.js';
import { localeLookupChain, pickLocalization } from './template-locale.js';
import { tagsBeyond } from './template-prescan.js';
import { checkTemplate, compileFailure, MAX_FIELD_TAGS, MAX_VERSION_TAGS, parseTemplate } from './template-syntax.js';
import {
  renderContext,
  variableRules,
  variablesUsed,
  type TemplateVariableDeclaration,
  type TemplateVariables,
  type VariableRules,
} from './template-variables.js';

/**
 * The template engine (CONTRACT.md "Templates"): Handlebars, compiled once per version, rendered under a budget.
 *
 * - Handlebars parses and compiles every field in its own environment (`Handlebars.create()`), with the compiler
 *   told that only `if`, `unless`, `each`, `with` and `lookup` exist (`knownHelpersOnly`; template-syntax.ts
 *   refuses the rest first, with line and column).
 * - The checked tree renders through template-interpreter.ts, as Handlebars' runtime would render it with
 *   prototype access off: paths read own properties only, and nothing the data holds is ever called.
 * - In html, `{{x}}` is HTML-escaped and `{{{x}}}` is not; in subject and text nothing is escaped.
 * - Output and work are bounded while rendering (render-budget.ts): every piece of output is charged before it
 *   is appended, and every loop iteration and block is a step.
 */

export type { TemplateVariableDeclaration, TemplateVariables } from './template-variables.js';
export type { RenderedField } from './render-budget.js';

export interface TemplateLocalizationSource {
  subject?: string | null | undefined;
  html?: string | null | undefined;
  text?: string | null | undefined;
}

/** One version's content, as stored (domain/entities/templates.ts). An empty html or text is none. */
export interface TemplateSource {
  subject: string;
  html?: string | null | undefined;
  text?: string | null | undefined;
  variables?: readonly TemplateVariableDeclaration[] | null | undefined;
  localizations?: Readonly<Record<string, TemplateLocalizationSource>> | null | undefined;
}

interface CompiledField {
  /** How errors name it: `html`, `localizations.de.html`. */
  label: string;
  /** The checked tree as closures (`{{x}}` HTML-escaped in the html field). */
  compiled: CompiledProgram;
}

type CompiledFields = Partial<Record<RenderedField, CompiledField>>;

interface CompiledLocalization {
  /** The tag as the template spells it. */
  tag: string;
  fields: CompiledFields;
}

export interface CompiledTemplate {
  readonly fields: CompiledFields;
  /** By lower-cased tag (tags compare without regard to case). */
  readonly localizations: ReadonlyMap<string, CompiledLocalization>;
  readonly variables: VariableRules;
  /** The variables the template uses (template-variables.ts), in the order they first appear. */
  readonly variablesUsed: readonly string[];
  /** The length of its sources together, and their `{{ }}` tags: what a cache weighs it by. */
  readonly sourceChars: number;
  readonly tags: number;
}

export interface RenderRequest {
  variables?: TemplateVariables | null | undefined;
  /** A BCP 47 tag such as `de-AT`; none renders the template's own fields. */
  locale?: string | null | undefined;
}

export interface RenderedTemplate {
  subject: string;
  html: string | null;
  text: string | null;
  /**
   * The localization the render read, as the template spells its tag: the most specific one that gave at
   * least one field (for `de-AT`, `de-AT` if it gave any, else `de`); null when every field is the template's own.
   */
  locale: string | null;
}

const FIELDS: readonly RenderedField[] = ['subject', 'html', 'text'];

/**
 * Handlebars' own environment, for parsing and compiling only: nothing registered here reaches another user of
 * the package, and a template renders through template-interpreter.ts, never through Handlebars' runtime.
 */
const env = Handlebars.create();

const COMPILE_OPTIONS: CompileOptions = {
  data: true,
  knownHelpers: {
    if: true,
    unless: true,
    each: true,
    with: true,
    lookup: true,
    log: false,
    helperMissing: false,
    blockHelperMissing: false,
  },
  knownHelpersOnly: true,
  strict: false,
  // The parse already applied the standalone-line rule; the compiler's second pass must not strip again.
  ignoreStandalone: true,
  preventIndent: true,
};

/**
 * One field: parsed, checked (template-syntax.ts), then compiled by Handlebars' compiler, which judges it valid
 * as Handlebars would (its output is not kept: the interpreter renders the checked tree).
 */
function compileField(source: string, name: RenderedField, label: string): { field: CompiledField; used: string[] } {
  const program = parseTemplate(env, source, label);
  checkTemplate(program, label);
  const used = variablesUsed(program);
  try {
    env.precompile(program, COMPILE_OPTIONS);
  } catch (err) {
    throw compileFailure(env, err, label);
  }
  return { field: { label, compiled: compileProgram(program, name === 'html') }, used };
}

const present = (s: string | null | undefined): s is string => typeof s === 'string' && s !== '';

function compileFields(
  source: TemplateLocalizationSource,
  prefix: string,
  used: string[],
  requireSubject: boolean,
): CompiledFields {
  const fields: CompiledFields = {};
  for (const name of FIELDS) {
    const text = source[name];
    if (!present(text) && !(requireSubject && name === 'subject')) continue;
    const compiled = compileField(text ?? '', name, `${prefix}${name}`);
    fields[name] = compiled.field;
    used.push(...compiled.used);
  }
  return fields;
}

/**
 * A version compiled: every field of the template and of each localization, or a 400 naming the first that
 * does not compile (`template html does not compile at line 3, column 5: ...`,
 * `template localizations.de.subject ...`). Pure and synchronous; cache the result (template-cache.ts).
 */
export function compileTemplate(source: TemplateSource): CompiledTemplate {
  const tags = versionTags(source);
  const used: string[] = [];
  const fields = compileFields(source, '', used, true);
  const localizations = new Map<string, CompiledLocalization>();
  const given = source.localizations ?? {};
  // Sorted, so that the order variables are reported in does not depend on how the tags were stored.
  for (const tag of Object.keys(given).sort()) {
    const l = given[tag];
    if (l === undefined) continue;
    localizations.set(tag.toLowerCase(), { tag, fields: compileFields(l, `localizations.${tag}.`, used, false) });
  }
  let sourceChars = source.subject.length + (source.html?.length ?? 0) + (source.text?.length ?? 0);
  for (const l of Object.values(given))
    sourceChars += (l.subject?.length ?? 0) + (l.html?.length ?? 0) + (l.text?.length ?? 0);
  const variablesInOrder = [...new Set(used)];
  return {
    fields,
    localizations,
    variables: variableRules(source.variables ?? [], variablesInOrder),
    variablesUsed: variablesInOrder,
    sourceChars,
    tags,
  };
}

/** The tags of every field together; a 400 past MAX_VERSION_TAGS, before anything is compiled. */
function versionTags(source: TemplateSource): number {
  const texts = [source.subject, source.html, source.text];
  for (const l of Object.values(source.localizations ?? {})) texts.push(l.subject, l.html, l.text);
  let tags = 0;
  // Each field counted up to one past its own cap (that field is refused when it is compiled, naming where).
  for (const text of texts) if (present(text)) tags += tagsBeyond(text, MAX_FIELD_TAGS).tags;
  if (tags > MAX_VERSION_TAGS)
    throw invalid(
      `template does not compile: its fields and localizations hold more than ${MAX_VERSION_TAGS} {{ }} tags together`,
    );
  return tags;
}

/** The variables a compiled template uses (template-variables.ts gives the rule). */
export const templateVariablesUsed = (template: CompiledTemplate): readonly string[] => template.variablesUsed;

/**
 * A compiled template rendered with a send's variables and locale: each field from the most specific
 * localization that gives it, else the template's own. 400 when a required variable is missing
 * (`template.variables.<name> is required`), or when a field would exceed its send limit or the render its
 * steps (render-budget.ts); both are found while rendering, before the output is built.
 */
export function renderTemplate(
  template: CompiledTemplate,
  request: RenderRequest = {},
  maxSteps: number = MAX_RENDER_STEPS,
): RenderedTemplate {
  const context = renderContext(template.variables, request.variables ?? {});
  const chain = request.locale ? localeLookupChain(request.locale) : [];
  const rendered: RenderedTemplate = { subject: '', html: null, text: null, locale: null };
  const run = new RenderBudget(maxSteps);
  let mostSpecific = chain.length;
  for (const name of FIELDS) {
    const localized = pickLocalization(template.localizations, chain, (l) => l.fields[name] !== undefined);
    const field = localized?.fields[name] ?? template.fields[name];
    if (field === undefined) continue;
    if (localized !== undefined) mostSpecific = Math.min(mostSpecific, chain.indexOf(localized.tag.toLowerCase()));
    run.startField(name, field.label);
    const output = renderField(field, context, run);
    run.finishField(output);
    rendered[name] = output;
  }
  const tag = chain[mostSpecific];
  rendered.locale = tag === undefined ? null : (template.localizations.get(tag)?.tag ?? null);
  return rendered;
}

function renderField(field: CompiledField, context: Record<string, JsonValue>, budget: RenderBudget): string {
  try {
    return renderProgram(field.compiled, context, budget);
  } catch (err) {
    if (err instanceof AppError) throw err;
    // A render is a pure function of the template and the variables, both the caller's: whatever fails in it is a
    // 400 that says so, never a 500.
    const message = err instanceof Error ? err.message.replace(/ - \d+:\d+$/, '') : String(err);
    throw new AppError('validation', `template ${field.label} could not be rendered: ${message}`, { cause: err });
  }
}
