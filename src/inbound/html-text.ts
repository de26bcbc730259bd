import { Tokenizer, type TokenizerCallbacks } from 'htmlparser2';

/**
 * The text of an HTML body, for an inbound message that has no plain text part: blocks on lines of their own,
 * `<br>` as a line break, `<blockquote>` lines prefixed with `> ` (so that `stripped_text` finds a quoted
 * reply in it as in plain text), list items with `- `, entities decoded, whitespace collapsed as a browser
 * does (kept as written inside `<pre>`), nothing of `<head>`, `<script>`, `<style>`, `<template>`.
 *
 * Not mailparser's conversion (html-to-text): it builds a tree of the whole document and walks it
 * recursively, so a hostile message of deeply nested tags overflows the stack (and mailparser then drops the
 * HTML), and 18 MB of HTML took 3 s and 680 MB. This is one linear pass of htmlparser2's tokenizer (its
 * Parser keeps open elements in an array it shifts at the front, quadratic in nested tags; see
 * rewrite-anchors.ts), with no stack: a counter per kind of element that matters.
 */
export function htmlText(html: string): string {
  const lines: string[] = [];
  let line = '';
  /** Whether the line holds text (a prefix alone does not count). */
  let lineHasText = false;
  let pendingSpace = false;
  let quoteDepth = 0;
  let hidden = 0;
  let pre = 0;

  const endLine = () => {
    lines.push(lineHasText ? line : '');
    line = '';
    lineHasText = false;
    pendingSpace = false;
  };
  /** Ends the line being written, if any, so that what follows starts a line of its own. */
  const block = () => {
    if (lineHasText) endLine();
  };
  /** A blank line before what follows (paragraphs, headings), never two. */
  const paragraph = () => {
    block();
    if (lines.length > 0 && lines[lines.length - 1] !== '') endLine();
  };
  const write = (s: string) => {
    if (hidden > 0 || s === '') return;
    if (!lineHasText) {
      line = '> '.repeat(Math.min(quoteDepth, MAX_QUOTE_DEPTH));
      lineHasText = true;
      pendingSpace = false;
    } else if (pendingSpace) {
      line += ' ';
    }
    pendingSpace = false;
    line += s;
  };
  const text = (s: string) => {
    if (hidden > 0) return;
    if (pre > 0) {
      const parts = s.replace(/\r\n?/g, '\n').split('\n');
      parts.forEach((part, i) => {
        if (i > 0) endLine();
        write(part);
      });
      return;
    }
    // Whitespace collapses to one space, none at the start of a line.
    const words = s.split(/[ \t\n\r\f]+/);
    words.forEach((word, i) => {
      if (i > 0 && lineHasText) pendingSpace = true;
      write(word);
    });
  };

  const open = (name: string) => {
    if (HIDDEN.has(name)) hidden++;
    else if (name === 'br') endLine();
    else if (name === 'blockquote') {
      paragraph();
      quoteDepth++;
    } else if (name === 'pre') {
      block();
      pre++;
    } else if (name === 'li') {
      block();
      write('-');
      pendingSpace = true;
    } else if (PARAGRAPHS.has(name)) paragraph();
    else if (BLOCKS.has(name)) block();
  };
  const close = (name: string) => {
    if (HIDDEN.has(name)) hidden = Math.max(0, hidden - 1);
    else if (name === 'blockquote') {
      block();
      quoteDepth = Math.max(0, quoteDepth - 1);
      paragraph();
    } else if (name === 'pre') {
      block();
      pre = Math.max(0, pre - 1);
    } else if (PARAGRAPHS.has(name)) paragraph();
    else if (BLOCKS.has(name)) block();
  };

  const noop = () => undefined;
  // Only names as long as the longest that matters are sliced: a hostile document may have millions of tags.
  const nameAt = (start: number, end: number) => (end - start <= 10 ? html.slice(start, end).toLowerCase() : '');
  const callbacks: TokenizerCallbacks = {
    onopentagname(start, end) {
      open(nameAt(start, end));
    },
    onopentagend: noop,
    // HTML ignores the slash of `<div/>` (and `<br/>` is a break either way).
    onselfclosingtag: noop,
    onclosetag(start, end) {
      close(nameAt(start, end));
    },
    ontext(start, end) {
      text(html.slice(start, end));
    },
    ontextentity(codepoint) {
      // A non-breaking space (&nbsp;) stays as it is: it does not collapse, as it shows.
      text(String.fromCodePoint(codepoint));
    },
    onattribdata: noop,
    onattribentity: noop,
    onattribend: noop,
    onattribname: noop,
    oncdata: noop,
    oncomment: noop,
    ondeclaration: noop,
    onend: noop,
    onprocessinginstruction: noop,
  };
  const tokenizer = new Tokenizer({ decodeEntities: true }, callbacks);
  tokenizer.write(html);
  tokenizer.end();
  block();
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  let first = 0;
  while (first < lines.length && lines[first] === '') first++;
  return lines.slice(first).join('\n');
}

/** Nested quotes beyond this still read as quoted; a longer prefix would only make each line longer. */
const MAX_QUOTE_DEPTH = 10;

const HIDDEN = new Set(['head', 'script', 'style', 'template', 'title', 'noscript']);
const PARAGRAPHS = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'table', 'ul', 'ol', 'dl', 'hr']);
const BLOCKS = new Set([
  'div',
  'tr',
  'li',
  'dd',
  'dt',
  'section',
  'article',
  'header',
  'footer',
  'address',
  'center',
  'main',
  'nav',
  'aside',
  'figure',
  'figcaption',
  'form',
  'fieldset',
  'caption',
  'tbody',
  'thead',
  'tfoot',
  'body',
  'html',
]);
