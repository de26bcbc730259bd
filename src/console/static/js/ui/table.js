/** Data tables: a caption, column headers with scope, and a plain sentence instead of an empty table. */
import { h } from '../dom.js';

/**
 * columns: [{label, numeric?}]; rows: arrays of cells (strings or nodes), the first cell is the row's
 * header. `caption` is read by screen readers and shown only when `showCaption` is set.
 */
export function dataTable({ caption, columns, rows, empty, showCaption = false }) {
  if (rows.length === 0) return h('p', { class: 'empty' }, empty);
  const cellClass = (i) => (columns[i].numeric ? 'numeric' : null);
  return h('div', { class: 'table-wrap' },
    h('table', { class: 'data' },
      h('caption', { class: showCaption ? null : 'visually-hidden' }, caption),
      h('thead', {}, h('tr', {}, columns.map((c, i) => h('th', { scope: 'col', class: cellClass(i) }, c.label)))),
      h('tbody', {}, rows.map((cells) =>
        h('tr', {}, cells.map((cell, i) =>
          i === 0 ? h('th', { scope: 'row', class: cellClass(i) }, cell) : h('td', { class: cellClass(i) }, cell)))))));
}
