/**
 * A mail's HTML and text. The HTML goes into an iframe with an empty sandbox: no scripts, no forms, no
 * plugins, an opaque origin (it cannot read the console or its token), and the console's CSP keeps its
 * remote images from loading.
 */
import { h } from '../dom.js';

/**
 * The sandboxed frame mail HTML is shown in; set its `srcdoc` to show some. The sandbox is what keeps a mail's
 * scripts from running: the CSP alone would let a script from the console's own origin run, as the console.
 */
export function mailFrame({ html = '', title }) {
  return h('iframe', { class: 'mail-frame', sandbox: '', referrerpolicy: 'no-referrer', title, srcdoc: html });
}

export function mailPreview({ html, text, subject }) {
  return [
    h('h3', { class: 'subhead' }, 'HTML'),
    html ? mailFrame({ html, title: `HTML of “${subject}”` }) : h('p', { class: 'empty' }, 'No HTML part.'),
    h('h3', { class: 'subhead' }, 'Text'),
    text ? h('pre', { class: 'mail-text' }, text) : h('p', { class: 'empty' }, 'No text part.'),
  ];
}
