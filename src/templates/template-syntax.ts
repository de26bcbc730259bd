import { invalid, type AppError } from '../errors.js';
import { nestingBeyond, tagsBeyond } from './template-prescan.js';
import {
  bodyOf,
  isBlock,
  isMustache,
  isPath,
  isPathLiteral,
  isSubExpression,
  simpleName,
  type BlockStatement,
  type Expression,
  type Hash,
  type HandlebarsEnv,
  type Node,
  type Program,
} from './template-ast.js';

/**
 * What a template may say (CONTRACT.md "Templates": no code beyond Handlebars' own, no partials, no helpers from
 * outside), checked on the parsed template before it is compiled, so that a template is refused when it is
 * stored, with the line and column of what is wrong, rather than when a send renders it:
 *
 * - blocks `{{#if x}}`, `{{#unless x}}` (both with the optional `includeZero=true`), `{{#each x}}` (with
 *   `as |item index|`), `{{#with x}}` (with `as |value|`), each with `{{else}}`; and the Mustache-style section
 *   `{{#x}}...{{/x}}` / `{{^x}}...{{/x}}` over a variable, which Handlebars runs as `if`, `each` or `with` by what
 *   `x` holds;
 * - `lookup`, as `{{lookup obj key}}` or as a sub-expression `(lookup obj key)`: it reads a property by a name
 *   the data gives (a column of a row, a label by a code), which nothing else can, and reads only own
 *   properties, as every path does;
 * - nothing else: no partials (`{{> x}}`), no decorators (`{{* x}}`, `{{#* inline}}`), no other helper
 *   (`{{log}}`, `{{foo bar}}`, a raw block's helper), so no call reaches code a template names.
 */

/** Blocks and sub-expressions nested deeper than this are refused (every walk over the tree recurses). */
export const MAX_TEMPLATE_NESTING = 100;

/**
 * `{{ }}` tags in one field, and in a version's fields together (template-prescan.ts: a compile costs about
 * 50 µs and keeps 1.6 KB per tag): so a field compiles in at most about 0.25 s, a whole version in about 1 s, and
 * holds at most about 32 MB. An email template rarely has more than a few hundred tags per field.
 */
export const MAX_FIELD_TAGS = 5_000;
export const MAX_VERSION_TAGS = 20_000;

const BLOCK_HELPERS = new Set(['if', 'unless', 'each', 'with']);
const CONTEXT_BLOCKS = new Set(['each', 'with']);
/** Names reserved for the engine (its helpers once had them): a template cannot use them as a section. */
export const INTERNAL_HELPERS = new Set(['$html', '$raw', '$text']);
const ALLOWED = 'if, unless, each and with (as blocks) and lookup';

/** A template field that does not compile: a 400 naming the field, line and column (both from 1). */
export function notCompiling(label: string, reason: string, line?: number, column?: number): AppError {
  const at = line === undefined ? '' : column === undefined ? ` at line ${line}` : ` at line ${line}, column ${column}`;
  return invalid(`template ${label} does not compile${at}: ${reason}`);
}

const refuse = (label: string, node: Node, reason: string): AppError =>
  notCompiling(label, reason, node.loc?.start.line, node.loc === undefined ? undefined : node.loc.start.column + 1);

/** A field's source parsed, or a 400 naming where it does not parse. */
export function parseTemplate(env: HandlebarsEnv, source: string, label: string): Program {
  const { beyond } = tagsBeyond(source, MAX_FIELD_TAGS);
  if (beyond !== undefined)
    throw notCompiling(label, `more than ${MAX_FIELD_TAGS} {{ }} tags in one field`, beyond.line, beyond.column);
  const deep = nestingBeyond(source, MAX_TEMPLATE_NESTING);
  if (deep !== undefined)
    throw notCompiling(label, `${deep.what} nest deeper than ${MAX_TEMPLATE_NESTING}`, deep.line, deep.column);
  try {
    return env.parse(source);
  } catch (err) {
    throw compileFailure(env, err, label);
  }
}

export function compileFailure(env: HandlebarsEnv, err: unknown, label: string): AppError {
  // Handlebars' whitespace pass recurses once per nested block: thousands of them overflow the stack.
  if (err instanceof RangeError) return notCompiling(label, `blocks nest too deeply (at most ${MAX_TEMPLATE_NESTING})`);
  if (!(err instanceof Error)) return notCompiling(label, String(err));
  const located = exceptionPosition(err);
  if (located) return notCompiling(label, withoutPosition(err.message), located.line, located.column);
  // The grammar's own errors ("Parse error on line 3: <excerpt> Expecting ..., got ...") carry no position
  // but the line; the lexer still holds the token it stopped at, which gives the column too.
  const lines = err.message.split('\n');
  const first = lines[0] ?? '';
  const lineMatch = /on line (\d+)/.exec(first);
  const line = lineMatch ? Number(lineMatch[1]) : undefined;
  const token = lexerPosition(env);
  const column = token !== undefined && token.line === line ? token.column : undefined;
  const reason = first.startsWith('Lexical error')
    ? 'unrecognized text'
    : first.startsWith('Parse error')
      ? grammarReason(lines[lines.length - 1] ?? first)
      : withoutPosition(err.message);
  return notCompiling(label, reason, line, column);
}

/** The grammar's tokens as a template writer sees them. */
const TOKENS: Readonly<Record<string, string>> = {
  EOF: 'end of the template (is a block not closed?)',
  INVALID: "text (is a '}}' missing?)",
  CLOSE: "'}}'",
  CLOSE_UNESCAPED: "'}}}'",
  CLOSE_RAW_BLOCK: "'}}}}'",
  CLOSE_SEXPR: "')'",
  OPEN: "'{{'",
  OPEN_UNESCAPED: "'{{{'",
  OPEN_BLOCK: "'{{#'",
  OPEN_ENDBLOCK: "'{{/'",
  OPEN_INVERSE: "'{{^'",
  OPEN_INVERSE_CHAIN: "'{{else'",
  INVERSE: "'{{else}}'",
  OPEN_SEXPR: "'('",
  EQUALS: "'='",
  SEP: "'.' or '/'",
  ID: 'a name',
  STRING: 'a string',
  NUMBER: 'a number',
  BOOLEAN: 'true or false',
  DATA: "'@'",
  CONTENT: 'text',
};

/** "Expecting 'ID', 'STRING', ..., got 'CLOSE'" as "unexpected '}}'" (the list names grammar tokens). */
function grammarReason(line: string): string {
  const got = /got '([A-Z_]+)'$/.exec(line)?.[1];
  return got === undefined ? line : `unexpected ${TOKENS[got] ?? got}`;
}

/** Handlebars' Exception: `lineNumber` from 1, `column` from 0 (made from 1 here). */
function exceptionPosition(err: Error): { line: number; column: number } | undefined {
  const line: unknown = Reflect.get(err, 'lineNumber');
  const column: unknown = Reflect.get(err, 'column');
  return typeof line === 'number' && typeof column === 'number' ? { line, column: column + 1 } : undefined;
}

/** An Exception's message ends with ` - line:column`; the error names the position its own way. */
const withoutPosition = (message: string) => message.replace(/ - \d+:\d+$/, '');

const isObject = (v: unknown): v is object => typeof v === 'object' && v !== null;

/** Where the grammar's lexer stopped (the token it could not take), read right after a failed parse. */
function lexerPosition(env: HandlebarsEnv): { line: number; column: number } | undefined {
  const parser: unknown = Reflect.get(env, 'Parser');
  const lexer: unknown = isObject(parser) ? Reflect.get(parser, 'lexer') : undefined;
  const loc: unknown = isObject(lexer) ? Reflect.get(lexer, 'yylloc') : undefined;
  if (!isObject(loc)) return undefined;
  const line: unknown = Reflect.get(loc, 'first_line');
  const column: unknown = Reflect.get(loc, 'first_column');
  return typeof line === 'number' && typeof column === 'number' ? { line, column: column + 1 } : undefined;
}

/** Throws a 400 naming the first construct of `program` that templates may not use (see the module comment). */
export function checkTemplate(program: Program, label: string): void {
  checkProgram(program, label, 0);
}

function checkProgram(program: Program | undefined, label: string, depth: number): void {
  for (const statement of bodyOf(program)) {
    switch (statement.type) {
      case 'ContentStatement':
      case 'CommentStatement':
        break;
      case 'MustacheStatement':
        if (isMustache(statement)) checkMustache(statement, label);
        break;
      case 'BlockStatement':
        if (isBlock(statement)) checkBlock(statement, label, depth + 1);
        break;
      case 'PartialStatement':
      case 'PartialBlockStatement':
        throw refuse(label, statement, 'partials ({{> name}}) are not supported');
      case 'Decorator':
      case 'DecoratorBlock':
        throw refuse(label, statement, 'decorators ({{* name}}) are not supported');
      default:
        throw refuse(label, statement, `unsupported ${statement.type}`);
    }
  }
}

function checkMustache(m: hbs.AST.MustacheStatement, label: string): void {
  const name = simpleName(m.path);
  const call = m.params.length > 0 || hasHash(m.hash);
  if (name !== undefined && BLOCK_HELPERS.has(name))
    throw refuse(label, m, `${name} is a block: write {{#${name} ...}}...{{/${name}}}`);
  if (name === 'lookup') {
    checkLookup(m, label, 0);
    return;
  }
  if (call) throw refuse(label, m, unknownHelper(m.path));
  if (!isPath(m.path) && !isPathLiteral(m.path)) throw refuse(label, m, `unsupported ${m.path.type} in {{ }}`);
}

/** `nesting`: the sub-expressions around this call. */
function checkLookup(call: { params: Expression[]; hash: Hash | undefined } & Node, label: string, nesting: number) {
  if (call.params.length !== 2 || hasHash(call.hash))
    throw refuse(label, call, 'lookup takes two arguments and no options: {{lookup object key}}');
  for (const p of call.params) checkExpression(p, label, nesting);
}

function checkBlock(b: BlockStatement, label: string, depth: number): void {
  if (depth > MAX_TEMPLATE_NESTING) throw refuse(label, b, `blocks nest deeper than ${MAX_TEMPLATE_NESTING}`);
  const name = simpleName(b.path);
  const blockParams = b.program?.blockParams ?? [];
  if (name !== undefined && BLOCK_HELPERS.has(name)) {
    if (b.params.length !== 1) throw refuse(label, b, `#${name} takes exactly one argument`);
    const hashKeys = (b.hash?.pairs ?? []).map((p) => p.key);
    const allowedKeys = name === 'if' || name === 'unless' ? ['includeZero'] : [];
    const stray = hashKeys.find((k) => !allowedKeys.includes(k));
    if (stray !== undefined) throw refuse(label, b, `#${name} takes no option ${stray}`);
    const maxParams = name === 'each' ? 2 : name === 'with' ? 1 : 0;
    if (blockParams.length > maxParams)
      throw refuse(
        label,
        b,
        maxParams === 0
          ? `#${name} takes no block parameters (as |...|)`
          : `#${name} takes at most ${maxParams} block parameter${maxParams > 1 ? 's' : ''}`,
      );
    for (const p of b.params) checkExpression(p, label, 0);
    for (const pair of b.hash?.pairs ?? []) checkExpression(pair.value, label, 0);
  } else {
    // A section over a variable: `{{#items}}...{{/items}}`, with nothing but the path.
    if (name === 'lookup') throw refuse(label, b, 'lookup is not a block: write {{lookup object key}}');
    if (b.params.length > 0 || hasHash(b.hash) || !isPath(b.path) || (name !== undefined && INTERNAL_HELPERS.has(name)))
      throw refuse(label, b, unknownHelper(b.path));
    if (blockParams.length > 0) throw refuse(label, b, 'only #each and #with take block parameters (as |...|)');
  }
  checkProgram(b.program, label, depth);
  checkProgram(b.inverse, label, depth);
}

function checkExpression(e: Expression, label: string, nesting: number): void {
  if (!isSubExpression(e)) return;
  if (nesting + 1 > MAX_TEMPLATE_NESTING)
    throw refuse(label, e, `sub-expressions nest deeper than ${MAX_TEMPLATE_NESTING}`);
  if (simpleName(e.path) !== 'lookup') throw refuse(label, e, unknownHelper(e.path));
  checkLookup(e, label, nesting + 1);
}

const hasHash = (hash: Hash | undefined) => hash !== undefined && hash.pairs.length > 0;

function unknownHelper(path: Node): string {
  const shown = isPath(path) ? path.original : path.type;
  return `unknown helper ${JSON.stringify(shown)}: templates may use only ${ALLOWED}`;
}

/** The names a block body reads from a new context (each item, the with value, a section's value). */
export const changesContext = (b: BlockStatement): boolean => {
  const name = simpleName(b.path);
  return name === undefined || !BLOCK_HELPERS.has(name) || CONTEXT_BLOCKS.has(name);
};
