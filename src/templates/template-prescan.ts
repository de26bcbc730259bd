/**
 * What a template's source costs Handlebars, measured before it parses it: how many tags it holds and how deep
 * it nests.
 *
 * Tags: compiling costs about 50 µs and keeps about 1.6 KB per `{{ }}` tag (a field of 20,000 tags: 1 s and
 * 32 MB), whatever the text around them; so the number of tags is what bounds a compile, not the bytes.
 *
 * Nesting: measured before Handlebars parses it. Handlebars' parser slows down
 * sharply with nesting (about 0.1 s for 1,000 nested blocks, 3 s for 4,000: the same for `{{else if}}` chains
 * and nested sub-expressions), so a stored template could hold a create for minutes; this linear scan refuses
 * such a template first. It reads the source as Handlebars' lexer does, closely enough: block openers `{{#x}}`,
 * `{{^x}}` and `{{{{raw}}}}`, closers `{{/x}}`, chained `{{else x}}` (each nests one block until the closer),
 * and parentheses inside a mustache; comments, escaped mustaches (`\{{`) and raw block bodies are skipped.
 */

export interface NestingRefusal {
  /** 1-based, as the other compile errors. */
  line: number;
  column: number;
  what: 'blocks' | 'sub-expressions';
}

/** Where `source` first nests deeper than `max` (blocks, or sub-expressions in one mustache), if it does. */
export function nestingBeyond(source: string, max: number): NestingRefusal | undefined {
  const chains: number[] = [];
  let depth = 0;
  let i = source.indexOf('{{');
  while (i !== -1) {
    let next = i + 2;
    if (i > 0 && source[i - 1] === '\\') {
      i = source.indexOf('{{', next);
      continue;
    }
    if (source.startsWith('{{!--', i)) {
      const end = source.indexOf('--}}', i + 5);
      i = end === -1 ? -1 : source.indexOf('{{', end + 4);
      continue;
    }
    if (source.startsWith('{{{{', i)) {
      // A raw block: its body is text up to its closer.
      if (source[i + 4] === '/') {
        i = source.indexOf('{{', i + 4);
        continue;
      }
      const end = source.indexOf('{{{{/', i + 4);
      i = end === -1 ? -1 : source.indexOf('{{', end + 5);
      continue;
    }
    let j = i + 2;
    if (source[j] === '~') j++;
    const c = source[j];
    if (c === '!') {
      const end = source.indexOf('}}', j);
      i = end === -1 ? -1 : source.indexOf('{{', end + 2);
      continue;
    }
    if (c === '#' || (c === '^' && !/^\^\s*~?}}/.test(source.slice(j, j + 8)))) {
      chains.push(0);
      depth++;
    } else if (c === '/') {
      depth -= 1 + (chains.pop() ?? 0);
      if (depth < 0) depth = 0;
    } else if (/^else\s+[^\s~}]/.test(source.slice(j, j + 8)) && chains.length > 0) {
      chains[chains.length - 1] = (chains[chains.length - 1] ?? 0) + 1;
      depth++;
    }
    if (depth > max) return { ...position(source, i), what: 'blocks' };
    // Sub-expressions: parentheses up to the mustache's end.
    const close = source.indexOf('}}', j);
    const end = close === -1 ? source.length : close;
    let parens = 0;
    for (let k = j; k < end; k++) {
      const ch = source.charCodeAt(k);
      if (ch === 0x28 /* ( */ && ++parens > max) return { ...position(source, k), what: 'sub-expressions' };
      if (ch === 0x29 /* ) */ && parens > 0) parens--;
    }
    next = close === -1 ? source.length : close + 2;
    i = source.indexOf('{{', next);
  }
  return undefined;
}

function position(source: string, index: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let k = source.indexOf('\n'); k !== -1 && k < index; k = source.indexOf('\n', k + 1)) {
    line++;
    lineStart = k + 1;
  }
  return { line, column: index - lineStart + 1 };
}

/**
 * The `{{ }}` tags of `source` (an escaped `\{{` is text; a tag inside a comment counts, which errs on the safe
 * side), and where the one after the first `max` starts, if there are more.
 */
export function tagsBeyond(source: string, max: number): { tags: number; beyond?: { line: number; column: number } } {
  let tags = 0;
  let i = source.indexOf('{{');
  while (i !== -1) {
    let end = i + 2;
    // `{{{x}}}` and `{{{{raw}}}}` are one tag.
    while (source[end] === '{') end++;
    if (!(i > 0 && source[i - 1] === '\\') && ++tags > max) return { tags, beyond: position(source, i) };
    i = source.indexOf('{{', end);
  }
  return { tags };
}
