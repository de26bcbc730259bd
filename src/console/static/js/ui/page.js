/** The pieces every page is made of: its header, titled sections and the error shown instead of a page. */
import { h } from '../dom.js';

/** The page's <h1>, with optional breadcrumb links ([label, href]) above and actions beside it. */
export function pageHeader(title, { crumbs = [], meta = null, actions = null } = {}) {
  return h(
    'header',
    { class: 'page-header' },
    crumbs.length
      ? h(
          'nav',
          { 'aria-label': 'Breadcrumb', class: 'crumbs' },
          h(
            'ol',
            {},
            crumbs.map(([label, href]) => h('li', {}, h('a', { href }, label))),
          ),
        )
      : null,
    h(
      'div',
      { class: 'page-title-row' },
      h('h1', { class: 'page-title', tabindex: -1 }, h('span', { class: 'title-text' }, title), meta),
      actions ? h('div', { class: 'page-actions' }, actions) : null,
    ),
  );
}

export function section(title, ...children) {
  return h('section', { class: 'card' }, h('h2', { class: 'card-title' }, title), children);
}

export function errorPanel(err) {
  return h(
    'div',
    { class: 'card error-panel', role: 'alert' },
    h('h1', { class: 'page-title', tabindex: -1 }, err.status === 404 ? 'Not found' : 'Something went wrong'),
    h('p', {}, err.message || String(err)),
  );
}

/** One label and value of a <dl class="facts">. */
export function fact(label, ...value) {
  return h('div', { class: 'fact' }, h('dt', {}, label), h('dd', {}, value));
}
