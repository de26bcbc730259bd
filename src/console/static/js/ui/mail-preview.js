/**
 * A mail's HTML and text. The HTML goes into an iframe with an empty sandbox: no scripts, no forms, no
 * plugins, an opaque origin (it cannot read the console or its token), and the console's CSP keeps its
 * remote images from loading.
 */
import { h } from '../dom.js';

export function mailPreview({ html, text, subject }) {
  return [
    h('h3', { class: 'subhead' }, 'HTML'),
    html
      ? h('iframe', {
          class: 'mail-frame',
          sandbox: '',
          referrerpolicy: 'no-referrer',
          title: `HTML of “${subject}”`,
          srcdoc: html,
        })
      : h('p', { class: 'empty' }, 'No HTML part.'),
    h('h3', { class: 'subhead' }, 'Text'),
    text ? h('pre', { class: 'mail-text' }, text) : h('p', { class: 'empty' }, 'No text part.'),
  ];
}
