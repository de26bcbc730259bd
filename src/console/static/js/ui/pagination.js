/** Previous / next paging for lists the API pages (page numbers from 1). */
import { h } from '../dom.js';
import { dataTable } from './table.js';

/** The page links under a list of `total` items, `pageSize` a page; none when it fits on one page. */
export function pagination({ page, pageSize, total, label, onPage }) {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  if (pages === 1) return null;
  return h(
    'nav',
    { class: 'pagination', 'aria-label': `${label} pages` },
    h(
      'button',
      { type: 'button', class: 'button secondary small', disabled: page <= 1, onclick: () => onPage(page - 1) },
      'Previous',
    ),
    h('span', { class: 'page-of' }, `Page ${page} of ${pages} (${total} in all)`),
    h(
      'button',
      { type: 'button', class: 'button secondary small', disabled: page >= pages, onclick: () => onPage(page + 1) },
      'Next',
    ),
  );
}

/** The page a list shows: `?page=` of the query, 1 when it is absent or not a number. */
export function pageOf(query) {
  return Math.max(1, Number.parseInt(query.page, 10) || 1);
}

/** One page of a list: its table (dataTable's options), then the page links (pagination's). */
export function pagedTable(table, paging) {
  return [dataTable(table), pagination(paging)];
}
