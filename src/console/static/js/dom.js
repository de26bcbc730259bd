/**
 * Builds DOM nodes. Everything the API returns goes in as text nodes or attribute values, never as HTML,
 * so nothing from a mail or an account name can inject markup into the console.
 */

/**
 * h('a', { href: '#/x', class: 'link', onclick: fn }, 'text', child, ...)
 * Attributes: `on*` functions become listeners; `true` sets an empty attribute; `false`, null and
 * undefined leave it out. Children: strings and numbers become text; null, undefined and false are skipped;
 * arrays are flattened.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  setAttributes(el, attrs);
  append(el, children);
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** The same as h() for SVG elements. */
export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  setAttributes(el, attrs);
  append(el, children);
  return el;
}

function setAttributes(el, attrs) {
  for (const [name, value] of Object.entries(attrs)) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces all children of `el`. */
export function replaceChildren(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

let lastId = 0;
/** A document-unique id, to tie a <label> or aria-* attribute to its element. */
export function uniqueId(prefix) {
  lastId += 1;
  return `${prefix}-${lastId}`;
}
