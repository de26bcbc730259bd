import Handlebars from 'handlebars';
import { AppError, invalid } from '../errors.js';
import type { JsonValue } from '../domain/json.js';
import { MAX_RENDER_STEPS, measure, RenderBudget, type RenderedField } from './render-budget.js';
import { instrument } from './template-instrument.js';
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
 * - Its own environment (`Handlebars.create()`): nothing registered here reaches another user of the package,
 *   and nothing registered elsewhere reaches a template.
 * - Only Handlebars' `if`, `unless`, `each`, `with` and `lookup` (template-syntax.ts says why `lookup`), each
 *   charging the render's budget, plus the engine's emitting helpers; `log` is removed, and the compiler is told
 *   that no other helper exists (`knownHelpersOnly`), so no template calls anything else.
 * - No prototype access: paths read own properties only (`allowProtoPropertiesByDefault` and
 *   `allowProtoMethodsByDefault` false, set explicitly so Handlebars neither reads nor logs).
 * - In html, `{{x}}` is HTML-escaped and `{{{x}}}` is not; in subject and text nothing is escaped.
 * - Output and work are bounded while rendering (render-budget.ts): every piece of output goes through a helper
 *   that charges it (template-instrument.ts), and every loop iteration and helper call is a step.
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

type Render = Handlebars.TemplateDelegate<Record<string, JsonValue>>;

interface CompiledField {
  /** How errors name it: `html`, `localizations.de.html`. */
  label: string;
  render: Render;
  /** The size of its top-level literal text (template-instrument.ts), charged as the field starts. */
  rootSize: number;
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

const env = Handlebars.create();
const builtin = { ...env.helpers };
env.unregisterHelper('log');

/** The budget of the render running now. Rendering is synchronous, so one render runs at a time. */
let active: RenderBudget | undefined;

function budget(): RenderBudget {
  if (active === undefined) throw new Error('template helpers run only inside renderTemplate');
  return active;
}

/** A value as Handlebars prints it (`null` and `undefined` as nothing, arrays joined by commas), never throwing. */
function display(value: unknown, depth = 0): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  // An array prints its items as Array.prototype.join would, without calling anything the data holds.
  if (Array.isArray(value))
    return depth > 32 ? '' : value.map((item: unknown) => (item == null ? '' : display(item, depth + 1))).join(',');
  if (typeof value === 'object' && value !== null) return '[object Object]';
  return '';
}

/** A built-in helper that first charges one step. */
function counted(helper: Handlebars.HelperDelegate | undefined, name: string): Handlebars.HelperDelegate {
  if (helper === undefined) throw new Error(`Handlebars has no built-in ${name} helper`);
  return function (this: unknown, ...args: unknown[]): unknown {
    budget().step();
    return Reflect.apply(helper, this, args);
  };
}

/**
 * Handlebars' own `each` (so `@index`, `@key`, `@first`, `@last` and block parameters behave as documented),
 * with a body that charges one step per iteration: a loop whose body outputs nothing still ends within the
 * budget. Sections over arrays (`{{#items}}`) run this too: Handlebars hands them to the environment's `each`.
 */
function countedEach(each: Handlebars.HelperDelegate | undefined): Handlebars.HelperDelegate {
  if (each === undefined) throw new Error('Handlebars has no built-in each helper');
  return function (this: unknown, context: unknown, options: Handlebars.HelperOptions): unknown {
    budget().step();
    const body = options.fn;
    const fn: Handlebars.TemplateDelegate = (item, runtime) => {
      budget().step();
      return body(item, runtime);
    };
    return each.call(this, context, { ...options, fn });
  };
}

env.registerHelper({
  $html: (value: unknown) => budget().output(env.escapeExpression(display(value))),
  $raw: (value: unknown) => budget().output(display(value)),
  $text: (value: unknown) => budget().output(typeof value === 'string' ? value : ''),
  if: counted(builtin.if, 'if'),
  unless: counted(builtin.unless, 'unless'),
  with: counted(builtin.with, 'with'),
  lookup: counted(builtin.lookup, 'lookup'),
  each: countedEach(builtin.each),
});

const COMPILE_OPTIONS: CompileOptions = {
  data: true,
  knownHelpers: {
    $html: true,
    $raw: true,
    $text: true,
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

const RUNTIME_OPTIONS: Handlebars.RuntimeOptions = {
  allowProtoPropertiesByDefault: false,
  allowProtoMethodsByDefault: false,
  allowCallsToHelperMissing: false,
};

/** One field: parsed, checked, rewritten to charge its output, compiled now (not at its first render). */
function compileField(source: string, name: RenderedField, label: string): { field: CompiledField; used: string[] } {
  const ast = parseTemplate(env, source, label);
  checkTemplate(ast, label);
  const used = variablesUsed(ast);
  const { program, rootText } = instrument(ast, name === 'html');
  const render: Render = env.compile(program, COMPILE_OPTIONS);
  // Handlebars compiles on first use; its setup step compiles now, so that a failure is the create's 400.
  const setup: unknown = Reflect.get(render, '_setup');
  try {
    if (typeof setup === 'function') setup.call(render, { ...RUNTIME_OPTIONS });
  } catch (err) {
    throw compileFailure(env, err, label);
  }
  return { field: { label, render, rootSize: measure(name, rootText) }, used };
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
  const previous = active;
  active = run;
  try {
    for (const name of FIELDS) {
      const localized = pickLocalization(template.localizations, chain, (l) => l.fields[name] !== undefined);
      const field = localized?.fields[name] ?? template.fields[name];
      if (field === undefined) continue;
      if (localized !== undefined) mostSpecific = Math.min(mostSpecific, chain.indexOf(localized.tag.toLowerCase()));
      run.startField(name, field.label);
      run.charge(field.rootSize);
      const output = renderField(field, context);
      run.finishField(output);
      rendered[name] = output;
    }
  } finally {
    active = previous;
  }
  const tag = chain[mostSpecific];
  rendered.locale = tag === undefined ? null : (template.localizations.get(tag)?.tag ?? null);
  return rendered;
}

function renderField(field: CompiledField, context: Record<string, JsonValue>): string {
  try {
    return field.render(context, RUNTIME_OPTIONS);
  } catch (err) {
    if (err instanceof AppError) throw err;
    // A render is a pure function of the template and the variables, both the caller's: what fails in it (a
    // Handlebars refusal; data Handlebars cannot compare, such as an object whose `toString` is not a function)
    // is a 400 that says so, never a 500.
    const message = err instanceof Error ? err.message.replace(/ - \d+:\d+$/, '') : String(err);
    throw new AppError('validation', `template ${field.label} could not be rendered: ${message}`, { cause: err });
  }
}
