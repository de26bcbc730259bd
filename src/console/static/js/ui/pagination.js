/** Previous / next paging for lists the API pages (page numbers from 1). */
import { h } from '../dom.js';

export function pagination({ page, pageSize, total, label, onPage }) {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  if (pages === 1) return null;
  return h('nav', { class: 'pagination', 'aria-label': `${label} pages` },
    h('button', { type: 'button', class: 'button secondary small', disabled: page <= 1, onclick: () => onPage(page - 1) }, 'Previous'),
    h('span', { class: 'page-of' }, `Page ${page} of ${pages} (${total} in all)`),
    h('button', { type: 'button', class: 'button secondary small', disabled: page >= pages, onclick: () => onPage(page + 1) }, 'Next'));
}
