import type Handlebars from 'handlebars';

/**
 * Handlebars' AST as its typings describe it (`hbs.AST`, a global namespace of its declaration file), with the
 * type guards the typings leave out: a statement is typed as a bare node, so each kind is told by its `type`.
 */
export type Program = hbs.AST.Program;
export type Node = hbs.AST.Node;
export type Statement = hbs.AST.Statement;
export type Expression = hbs.AST.Expression;
export type MustacheStatement = hbs.AST.MustacheStatement;
export type BlockStatement = hbs.AST.BlockStatement;
export type ContentStatement = hbs.AST.ContentStatement;
export type SubExpression = hbs.AST.SubExpression;
export type PathExpression = hbs.AST.PathExpression;
export type StringLiteral = hbs.AST.StringLiteral;
export type Hash = hbs.AST.Hash;
export type SourceLocation = hbs.AST.SourceLocation;

/** The environment type `Handlebars.create()` answers. */
export type HandlebarsEnv = typeof Handlebars;

const guard =
  <T extends Node>(...types: string[]) =>
  (node: Node | undefined | null): node is T =>
    node !== undefined && node !== null && types.includes(node.type);

export const isMustache = guard<MustacheStatement>('MustacheStatement');
export const isBlock = guard<BlockStatement>('BlockStatement');
export const isContent = guard<ContentStatement>('ContentStatement');
export const isSubExpression = guard<SubExpression>('SubExpression');
export const isPath = guard<PathExpression>('PathExpression');
export const isStringLiteral = guard<StringLiteral>('StringLiteral');

/** A literal used where a path goes (`{{"first name"}}`, `{{true}}`): Handlebars looks it up as a name. */
export interface PathLiteral extends Node {
  type: 'StringLiteral' | 'NumberLiteral' | 'BooleanLiteral';
  original: string | number | boolean;
}
export const isPathLiteral = guard<PathLiteral>('StringLiteral', 'NumberLiteral', 'BooleanLiteral');

/**
 * The path a literal in a mustache's head stands for, as Handlebars' own compiler rewrites it
 * (compiler.js transformLiteralToPath): `{{"a b"}}` reads the property `a b`.
 */
export function literalAsPath(literal: PathLiteral): PathExpression {
  const name = String(literal.original);
  return { type: 'PathExpression', data: false, depth: 0, parts: [name], original: name, loc: literal.loc };
}

/** `name` alone: no `../`, no `this.`, no `@`, one part. What a helper is called by. */
export function simpleName(path: Node): string | undefined {
  if (!isPath(path) || path.data || path.depth !== 0 || path.parts.length !== 1) return undefined;
  return isScoped(path) ? undefined : path.parts[0];
}

/** `this.x`, `./x`: a context lookup that neither helpers nor block parameters shadow (Handlebars' scopeId). */
export const isScoped = (path: PathExpression) => /^\.|this\b/.test(path.original);

/** The statements of an optional program (an inverted block `{{^x}}` has none in its main program). */
export const bodyOf = (program: Program | undefined | null): Statement[] => program?.body ?? [];
