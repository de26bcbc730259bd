import { invalid } from '../errors.js';
import type { JsonValue } from '../domain/json.js';
import {
  bodyOf,
  isBlock,
  isMustache,
  isPath,
  isPathLiteral,
  isScoped,
  isSubExpression,
  literalAsPath,
  simpleName,
  type Expression,
  type PathExpression,
  type Program,
} from './template-ast.js';
import { changesContext } from './template-syntax.js';

/**
 * The variables a template uses, and the context a render reads them from.
 *
 * The rule (a template is checked against it when a send gives its variables): a variable is a name the
 * template reads from the variables themselves, that is the head of a path
 *
 * - outside any `{{#each}}`, `{{#with}}` or section `{{#x}}` body (`{{name}}`, `{{user.name}}` → `user`, the
 *   argument of `{{#each items}}` → `items`, `{{#if vip}}` → `vip`; inside `{{#if}}`/`{{#unless}}` bodies and
 *   every `{{else}}` too, which read the same context);
 * - or inside such a body, when it reaches back to the variables: `{{@root.name}}`, or `../` as many times as
 *   bodies enclose it (`{{#each items}}{{../currency}}{{/each}}` → `currency`).
 *
 * Not variables: `this`, `@index` and the other `@` data, block parameters (`as |item|`), and names inside an
 * each/with body that read the item (`{{#each items}}{{name}}{{/each}}`: `name` is the item's). Neither are
 * the names of Object.prototype's properties (`constructor`, `toString`, ...): they cannot be declared, and a
 * template reading them renders them empty (unless given).
 */

export interface TemplateVariableDeclaration {
  name: string;
  /** Default true. */
  required?: boolean | undefined;
  /** Used when a render does not give the variable. */
  default?: JsonValue | undefined;
}

export type TemplateVariables = Readonly<Record<string, JsonValue>>;

interface Scope {
  /** Bodies entered that read a new context (each, with, sections). */
  level: number;
  blockParams: ReadonlySet<string>;
}

/** The variables `program` uses, in the order they first appear. */
export function variablesUsed(program: Program): string[] {
  const found = new Set<string>();
  walkProgram(program, { level: 0, blockParams: new Set() }, found);
  return [...found];
}

function walkProgram(program: Program | undefined, scope: Scope, found: Set<string>): void {
  for (const s of bodyOf(program)) {
    if (isMustache(s)) {
      if (simpleName(s.path) === 'lookup') walkExpressions(s.params, scope, found);
      else if (isPathLiteral(s.path)) readPath(literalAsPath(s.path), scope, found);
      else if (isPath(s.path)) readPath(s.path, scope, found);
    } else if (isBlock(s)) {
      walkExpressions(s.params, scope, found);
      walkExpressions(
        (s.hash?.pairs ?? []).map((p) => p.value),
        scope,
        found,
      );
      const name = simpleName(s.path);
      // A section reads its own path (`{{#items}}` → items) before its body reads the value.
      if (name === undefined || !['if', 'unless', 'each', 'with'].includes(name)) {
        if (isPath(s.path)) readPath(s.path, scope, found);
      }
      const inner: Scope = changesContext(s)
        ? { level: scope.level + 1, blockParams: new Set([...scope.blockParams, ...(s.program?.blockParams ?? [])]) }
        : scope;
      walkProgram(s.program, inner, found);
      walkProgram(s.inverse, scope, found);
    }
  }
}

function walkExpressions(expressions: readonly Expression[], scope: Scope, found: Set<string>): void {
  for (const e of expressions) {
    if (isPath(e)) readPath(e, scope, found);
    else if (isSubExpression(e)) walkExpressions(e.params, scope, found);
  }
}

function readPath(path: PathExpression, scope: Scope, found: Set<string>): void {
  const head = path.parts[0];
  if (path.data) {
    const [root, name] = path.parts;
    if (root === 'root' && name !== undefined && !isPrototypeName(name)) found.add(name);
    return;
  }
  if (head === undefined || isPrototypeName(head)) return;
  if (path.depth === 0 && !isScoped(path) && scope.blockParams.has(head)) return;
  if (path.depth === scope.level) found.add(head);
}

const PROTOTYPE_NAMES = new Set(Object.getOwnPropertyNames(Object.prototype));
const isPrototypeName = (name: string) => PROTOTYPE_NAMES.has(name);

export interface VariableRules {
  declared: readonly TemplateVariableDeclaration[];
  /** Used by the template but not declared: required. */
  undeclared: readonly string[];
}

/** Declared first, then the undeclared ones the template uses (in the order they appear). */
export function variableRules(declared: readonly TemplateVariableDeclaration[], used: Iterable<string>): VariableRules {
  const names = new Set(declared.map((d) => d.name));
  const undeclared: string[] = [];
  for (const name of used) {
    if (names.has(name)) continue;
    names.add(name);
    undeclared.push(name);
  }
  return { declared, undeclared };
}

/**
 * An own property, even for a name such as `__proto__` (which assignment would take as the prototype). The
 * context keeps Object's prototype: Handlebars compares contexts with `!=`, which must be able to turn an object
 * into a primitive; paths read own properties only (template-engine.ts), so nothing inherited is ever read.
 */
const define = (target: Record<string, JsonValue>, name: string, value: JsonValue) => {
  // Assignment keeps the object's fast properties (defineProperty on every name would not); `__proto__` is the one
  // name whose assignment on a plain object would do something else.
  if (name === '__proto__')
    Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true });
  else target[name] = value;
};

const given = (variables: TemplateVariables, name: string) =>
  Object.hasOwn(variables, name) && variables[name] !== undefined;

/**
 * The context a render reads: the variables given, each declared default where one is not given. A required
 * variable not given is a 400 naming it (`template.variables.<name> is required`): the first missing,
 * declared ones in their declared order before undeclared ones in the order the template uses them.
 */
export function renderContext(rules: VariableRules, variables: TemplateVariables): Record<string, JsonValue> {
  const context: Record<string, JsonValue> = {};
  for (const [name, value] of Object.entries(variables)) define(context, name, value);
  for (const d of rules.declared) {
    if (given(variables, d.name)) continue;
    if (d.default !== undefined) define(context, d.name, d.default);
    else if (d.required !== false) throw invalid(`template.variables.${d.name} is required`);
  }
  for (const name of rules.undeclared)
    if (!given(variables, name)) throw invalid(`template.variables.${name} is required`);
  return context;
}
