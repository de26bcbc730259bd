import {
  isBlock,
  isContent,
  isMustache,
  isPath,
  isPathLiteral,
  literalAsPath,
  simpleName,
  type BlockStatement,
  type Expression,
  type MustacheStatement,
  type Node,
  type PathExpression,
  type Program,
  type Statement,
  type SubExpression,
} from './template-ast.js';

/**
 * The checked template rewritten so that everything it outputs passes through the engine's counting helpers
 * (template-engine.ts), which charge the render's budget before the output is appended:
 *
 * - `{{x}}` becomes `{{$html x}}` in html (escaped by the helper) and `{{$raw x}}` in subject and text;
 *   `{{{x}}}` and `{{&x}}` become `{{$raw x}}`; `{{lookup a b}}` becomes `{{$html (lookup a b)}}`;
 * - literal text inside blocks becomes `{{$text "..."}}`, so that text repeated by a loop is charged at each
 *   repetition (the whitespace rules, `~` and standalone lines, were applied by the parse before this); the
 *   top level's text is output once per render and charged whole (`rootText`);
 * - comments go; blocks keep their shape, their bodies rewritten.
 *
 * Every emitted mustache is unescaped (`{{{ }}}`): the helpers have done the escaping where it applies, and the
 * length they charged is the length appended.
 */
export function instrument(program: Program, escapeHtml: boolean): InstrumentedTemplate {
  const rootText: string[] = [];
  const body = program.body.flatMap((s) => {
    if (!isContent(s)) return rewrite(s, escapeHtml);
    rootText.push(s.value);
    return s.value === '' ? [] : [s];
  });
  return { program: { ...program, body }, rootText: rootText.join('') };
}

export interface InstrumentedTemplate {
  program: Program;
  /**
   * The literal text of the template's top level, which each render outputs exactly once: charged whole when
   * the field starts, so that it costs no helper call (the text inside blocks, which loops may repeat, is
   * charged piece by piece as it is output).
   */
  rootText: string;
}

function instrumentBody(program: Program, escapeHtml: boolean): Program {
  return { ...program, body: program.body.flatMap((s) => rewrite(s, escapeHtml)) };
}

function rewrite(s: Statement, escapeHtml: boolean): Statement[] {
  if (isContent(s)) return s.value === '' ? [] : [emit('$text', text(s.value, s), s)];
  if (isMustache(s)) {
    const helper = escapeHtml && s.escaped ? '$html' : '$raw';
    return [emit(helper, valueOf(s), s)];
  }
  if (isBlock(s)) {
    const block: BlockStatement = {
      ...s,
      program: s.program && instrumentBody(s.program, escapeHtml),
      inverse: s.inverse && instrumentBody(s.inverse, escapeHtml),
    };
    return [block];
  }
  // Comments (and nothing else: the template was checked) output nothing.
  return [];
}

/** What a mustache outputs, as an argument: its path, or its `lookup` call as a sub-expression. */
function valueOf(m: MustacheStatement): Expression {
  if (simpleName(m.path) === 'lookup' && isPath(m.path)) {
    const call: SubExpression = { type: 'SubExpression', path: m.path, params: m.params, hash: m.hash, loc: m.loc };
    return call;
  }
  return isPathLiteral(m.path) ? literalAsPath(m.path) : m.path;
}

function text(value: string, at: Node): hbs.AST.StringLiteral {
  return { type: 'StringLiteral', value, original: value, loc: at.loc };
}

function emit(helper: string, value: Expression, at: Node): MustacheStatement {
  const path: PathExpression = {
    type: 'PathExpression',
    data: false,
    depth: 0,
    parts: [helper],
    original: helper,
    loc: at.loc,
  };
  const m: MustacheStatement = {
    type: 'MustacheStatement',
    path,
    params: [value],
    hash: { type: 'Hash', pairs: [], loc: at.loc },
    escaped: false,
    strip: { open: false, close: false },
    loc: at.loc,
  };
  // Handlebars passes a helper call's location to it in a fresh object each call; these calls need none (their
  // errors name the field, and the argument keeps its own). The typings require `loc`; Handlebars does not.
  Reflect.deleteProperty(m, 'loc');
  return m;
}
