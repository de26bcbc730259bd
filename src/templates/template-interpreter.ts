import Handlebars from 'handlebars';
import type { JsonValue } from '../domain/json.js';
import type { RenderBudget } from './render-budget.js';
import {
  isBlock,
  isContent,
  isMustache,
  isPath,
  isPathLiteral,
  isScoped,
  isSubExpression,
  literalAsPath,
  simpleName,
  type BlockStatement,
  type Expression,
  type MustacheStatement,
  type PathExpression,
  type Program,
  type Statement,
} from './template-ast.js';

/**
 * Renders a checked template's tree (template-syntax.ts) as Handlebars' runtime renders that tree. Handlebars
 * parses and compiles every template (its compiler judges what is valid); this turns the parsed tree into
 * closures once per version and runs those. Why not Handlebars' runtime: per field and per render it re-creates
 * its helper table and wrappers, and every helper call (each output had to be one, to be charged) builds an
 * options object; in the service that made a templated send cost some 20 % more CPU than the same send written
 * out, against the 10 % allowed (issue 24). The language is small (template-syntax.ts refuses the rest) and the
 * data plain JSON; test/unit/templates-parity.test.ts renders a corpus with both and compares.
 *
 * Handlebars' rules kept:
 * - Paths read own properties only (a string's `length` and indexes are its own); a null or missing step ends
 *   the path; `../` climbs the stack of contexts, which grows only when a block changes the context (so `../`
 *   inside `#if` is the context's parent, not the context outside the `#if`); `this` and `./x` skip block
 *   parameters, which are resolved lexically as Handlebars' compiler resolves them; `@index`, `@key`, `@first`,
 *   `@last`, `@root` and `@../x` read the data frames `#each` makes.
 * - `#if`/`#unless`: empty is null, undefined, false, '', NaN, [] and, without `includeZero=true`, 0. `#with`: its
 *   body unless the value is empty (0 is not). `#each` over arrays and objects' own keys, its `{{else}}` when
 *   nothing was iterated. A section `{{#x}}` renders its body once for true, not for false or nothing, per item of
 *   a non-empty array, and once with x as the context for anything else.
 * - Output: null and undefined as nothing, other values as JavaScript writes them, arrays joined by commas; in
 *   html, `{{x}}` escaped with Handlebars' own escapeExpression.
 * One deliberate difference: Handlebars' runtime adds adjacent numbers in unescaped output (`{{{a}}}{{{b}}}` with 1
 * and 2 renders 3); here they are written (12). Every piece of output and every block and loop step is charged to
 * the render's budget (render-budget.ts).
 */

type Value = JsonValue | undefined;

/** A data frame (`@index` and friends), as Handlebars' createFrame makes them: a copy with its parent. */
interface DataFrame {
  root: Value;
  index?: number;
  key?: string | number;
  first?: boolean;
  last?: boolean;
  _parent?: DataFrame;
}

/** The stack of contexts (Handlebars' depths), innermost first. */
interface Contexts {
  value: Value;
  up: Contexts | undefined;
}

/** Block parameters' values, innermost block first. */
interface Params {
  values: Value[];
  up: Params | undefined;
}

interface Scope {
  contexts: Contexts;
  data: DataFrame;
  params: Params | undefined;
}

type Render = (scope: Scope, budget: RenderBudget) => string;
type Evaluate = (scope: Scope, budget: RenderBudget) => Value;

/** A field's tree made into closures: render it with `renderProgram`. */
export interface CompiledProgram {
  render: Render;
}

const hasOwn = (o: object, key: string) => Object.prototype.hasOwnProperty.call(o, key);

/** One step of a path: an own property, as Handlebars' lookupProperty with prototype access off. */
function prop(parent: Value, name: string): Value {
  if (parent === null || parent === undefined) return parent;
  if (typeof parent === 'object') return hasOwn(parent, name) ? (parent as Record<string, Value>)[name] : undefined;
  if (typeof parent === 'string')
    return hasOwn(Object(parent), name) ? (Reflect.get(Object(parent), name) as Value) : undefined;
  return undefined;
}

/** A value as Handlebars prints it (`null` and `undefined` as nothing, arrays joined by commas), never throwing. */
export function display(value: unknown, depth = 0): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  // An array prints its items as Array.prototype.join would, without calling anything the data holds.
  if (Array.isArray(value))
    return depth > 32 ? '' : value.map((item: unknown) => (item == null ? '' : display(item, depth + 1))).join(',');
  if (typeof value === 'object' && value !== null) return '[object Object]';
  return '';
}

/** Handlebars' Utils.isEmpty. */
const isEmpty = (v: Value): boolean => (!v && v !== 0) || (Array.isArray(v) && v.length === 0);

/**
 * Handlebars' `context != depths[0]`, loosely (1 and '1', null and undefined are the same context), except that an
 * object is only ever itself: `!=` between an object and a primitive would convert the object, calling what the
 * data holds (`{"toString": "x"}` made Handlebars' runtime throw).
 */
function sameContext(a: Value, b: Value): boolean {
  if (a === b) return true;
  if (a === null || a === undefined || b === null || b === undefined) return (a ?? null) === (b ?? null);
  if (typeof a === 'object' || typeof b === 'object') return false;
  return String(a) === String(b) || Number(a) === Number(b);
}

/** The block parameter names in scope while compiling, innermost block first. */
type ParamNames = readonly (readonly string[])[];

/** Where a name is a block parameter: which enclosing block (0: innermost) and which of its parameters. */
function paramSlot(names: ParamNames, name: string): { block: number; index: number } | undefined {
  for (let block = 0; block < names.length; block++) {
    const index = names[block]!.indexOf(name);
    if (index >= 0) return { block, index };
  }
  return undefined;
}

function compilePath(p: PathExpression, names: ParamNames): Evaluate {
  const parts = p.parts;
  const depth = p.depth;
  const follow = (v: Value, from: number): Value => {
    for (let i = from; i < parts.length; i++) v = prop(v, parts[i]!);
    return v;
  };
  if (p.data) {
    const head = parts[0];
    return (scope) => {
      let frame: DataFrame | undefined = scope.data;
      for (let i = 0; i < depth && frame !== undefined; i++) frame = frame._parent;
      if (frame === undefined || head === undefined || head === '_parent' || !hasOwn(frame, head)) return undefined;
      return follow(Reflect.get(frame, head) as Value, 1);
    };
  }
  const head = parts[0];
  const slot = depth === 0 && head !== undefined && !isScoped(p) ? paramSlot(names, head) : undefined;
  if (slot !== undefined) {
    return (scope) => {
      let params = scope.params;
      for (let i = 0; i < slot.block && params !== undefined; i++) params = params.up;
      return follow(params?.values[slot.index], 1);
    };
  }
  if (depth === 0) return (scope) => follow(scope.contexts.value, 0);
  return (scope) => {
    let contexts: Contexts | undefined = scope.contexts;
    for (let i = 0; i < depth && contexts !== undefined; i++) contexts = contexts.up;
    return follow(contexts?.value, 0);
  };
}

function compileExpression(e: Expression, names: ParamNames): Evaluate {
  if (isPath(e)) return compilePath(e, names);
  if (isSubExpression(e)) return compileLookup(e.params, names);
  switch (e.type) {
    case 'StringLiteral':
    case 'NumberLiteral':
    case 'BooleanLiteral': {
      const value = (e as hbs.AST.StringLiteral | hbs.AST.NumberLiteral | hbs.AST.BooleanLiteral).value;
      return () => value;
    }
    case 'NullLiteral':
      return () => null;
    default:
      return () => undefined;
  }
}

/** `lookup obj key` (the one helper besides the blocks): obj itself when falsy, else its own property `key`. */
function compileLookup(params: Expression[], names: ParamNames): Evaluate {
  const obj = compileExpression(params[0]!, names);
  const key = compileExpression(params[1]!, names);
  return (scope, budget) => {
    budget.step();
    const o = obj(scope, budget);
    return o ? prop(o, String(key(scope, budget))) : o;
  };
}

/** A block's body run with `context` (Handlebars' wrapProgram): the context stack grows only if it changed. */
function enter(scope: Scope, context: Value, data: DataFrame, params: Params | undefined): Scope {
  const contexts = sameContext(context, scope.contexts.value) ? scope.contexts : { value: context, up: scope.contexts };
  return { contexts, data, params };
}

const NOTHING: Render = () => '';

function compileBody(program: Program | undefined, names: ParamNames, escapeHtml: boolean): Render {
  if (program === undefined || program.body.length === 0) return NOTHING;
  const own = program.blockParams ?? [];
  const inner = own.length > 0 ? [own, ...names] : names;
  const pieces: (string | Render)[] = [];
  for (const st of program.body) {
    if (isContent(st)) {
      if (st.value !== '') pieces.push(st.value);
    } else {
      const r = compileStatement(st, inner, escapeHtml);
      if (r !== NOTHING) pieces.push(r);
    }
  }
  if (pieces.length === 0) return NOTHING;
  if (pieces.length === 1) return typeof pieces[0] === 'string' ? textOf(pieces[0]) : pieces[0]!;
  // The body's literal text is output whenever the body runs, so it is charged once when the body starts, not
  // piece by piece: the same steps and size, earlier, and half the calls of a typical body.
  const texts = pieces.filter((p): p is string => typeof p === 'string');
  const textChars = texts.reduce((n, t) => n + t.length, 0);
  return (scope, budget) => {
    budget.outputText(texts.length, textChars);
    let out = '';
    for (const piece of pieces) out += typeof piece === 'string' ? piece : piece(scope, budget);
    return out;
  };
}

const textOf =
  (text: string): Render =>
  (_scope, budget) =>
    budget.output(text);

function compileStatement(st: Statement, names: ParamNames, escapeHtml: boolean): Render {
  if (isContent(st)) return st.value === '' ? NOTHING : textOf(st.value);
  if (isMustache(st)) return compileMustache(st, names, escapeHtml);
  if (isBlock(st)) return compileBlock(st, names, escapeHtml);
  // Comments output nothing; nothing else passed the check.
  return NOTHING;
}

function compileMustache(m: MustacheStatement, names: ParamNames, escapeHtml: boolean): Render {
  const value =
    simpleName(m.path) === 'lookup'
      ? compileLookup(m.params, names)
      : compilePath(isPathLiteral(m.path) ? literalAsPath(m.path) : (m.path as PathExpression), names);
  if (escapeHtml && m.escaped)
    return (scope, budget) => budget.output(Handlebars.escapeExpression(display(value(scope, budget))));
  return (scope, budget) => budget.output(display(value(scope, budget)));
}

function compileBlock(b: BlockStatement, names: ParamNames, escapeHtml: boolean): Render {
  const name = simpleName(b.path);
  // Block parameters are a frame of their own only where the body declares them (`as |item index|`).
  const declares = (b.program?.blockParams?.length ?? 0) > 0;
  const params = (scope: Scope, values: Value[]) => (declares ? { values, up: scope.params } : scope.params);
  const fn = compileBody(b.program, names, escapeHtml);
  const inverse = compileBody(b.inverse, names, escapeHtml);
  const param = b.params[0] === undefined ? undefined : compileExpression(b.params[0], names);
  switch (name) {
    case 'if':
    case 'unless': {
      const pair = b.hash?.pairs.find((p) => p.key === 'includeZero');
      const includeZero = pair === undefined ? undefined : compileExpression(pair.value, names);
      const [whenTrue, whenFalse] = name === 'if' ? [fn, inverse] : [inverse, fn];
      return (scope, budget) => {
        budget.step();
        const value = param!(scope, budget);
        const zeroCounts = includeZero !== undefined && Boolean(includeZero(scope, budget));
        const empty = (!zeroCounts && !value) || isEmpty(value);
        return (empty ? whenFalse : whenTrue)(scope, budget);
      };
    }
    case 'with':
      return (scope, budget) => {
        budget.step();
        const value = param!(scope, budget);
        if (isEmpty(value)) return inverse(scope, budget);
        return fn(enter(scope, value, scope.data, params(scope, [value])), budget);
      };
    case 'each':
      return (scope, budget) => {
        budget.step();
        return each(param!(scope, budget), fn, inverse, scope, budget, declares);
      };
    default: {
      // A section over a variable (Handlebars' blockHelperMissing).
      const value = compilePath(b.path as PathExpression, names);
      return (scope, budget) => {
        budget.step();
        const v = value(scope, budget);
        if (v === true) return fn(scope, budget);
        if (v === false || v === null || v === undefined) return inverse(scope, budget);
        if (Array.isArray(v)) return v.length > 0 ? each(v, fn, inverse, scope, budget, false) : inverse(scope, budget);
        return fn(enter(scope, v, scope.data, scope.params), budget);
      };
    }
  }
}

/** Handlebars' each: one data frame, updated per item; block parameters [item, key]; the inverse if none. */
function each(
  value: Value,
  fn: Render,
  inverse: Render,
  scope: Scope,
  budget: RenderBudget,
  declares: boolean,
): string {
  if (typeof value !== 'object' || value === null) return inverse(scope, budget);
  // Handlebars' createFrame copies the parent frame and then sets all four on every item: a frame holds nothing
  // else, so it is built whole here. Copied with a spread and then given its fields one by one, it changed shape
  // on every item and cost 40 % of a render.
  const frame: DataFrame = { root: scope.data.root, key: 0, index: 0, first: true, last: false, _parent: scope.data };
  let out = '';
  const keys = Array.isArray(value) ? undefined : Object.keys(value);
  const count = keys === undefined ? (value as Value[]).length : keys.length;
  if (count === 0) return inverse(scope, budget);
  // One scope for every item, updated in place: rendering is synchronous and nothing keeps a scope past its body.
  const contexts: Contexts = { value: undefined, up: scope.contexts };
  const values: Value[] = [undefined, undefined];
  const inner: Scope = { contexts, data: frame, params: declares ? { values, up: scope.params } : scope.params };
  for (let i = 0; i < count; i++) {
    budget.step();
    const key = keys === undefined ? i : keys[i]!;
    const item = (value as Record<string | number, Value>)[key];
    frame.key = key;
    frame.index = i;
    frame.first = i === 0;
    frame.last = i === count - 1;
    values[0] = item;
    values[1] = key;
    // Handlebars' stack grows only when the item is not the current context.
    contexts.value = item;
    inner.contexts = sameContext(item, scope.contexts.value) ? scope.contexts : contexts;
    out += fn(inner, budget);
  }
  return out;
}

/** A field's checked tree as closures, once per version; `escapeHtml` for the html field. */
export function compileProgram(program: Program, escapeHtml: boolean): CompiledProgram {
  return { render: compileBody(program, [], escapeHtml) };
}

/** A compiled field rendered with `context` (the variables, defaults applied) as its root. */
export function renderProgram(
  compiled: CompiledProgram,
  context: Record<string, JsonValue>,
  budget: RenderBudget,
): string {
  return compiled.render(
    { contexts: { value: context, up: undefined }, data: { root: context }, params: undefined },
    budget,
  );
}
