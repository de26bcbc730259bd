/** Data tables: a caption, column headers with scope, and a plain sentence instead of an empty table. */
import { h } from '../dom.js';

/**
 * columns: [{label, numeric?}]. rows: arrays of cells (strings or nodes), the first cell being the row's
 * header; or {cells, detail, detailId} to follow the row with a full-width row, hidden until a
 * disclosure() button in the row opens it. `caption` is for screen readers unless `showCaption`.
 */
export function dataTable({ caption, columns, rows, empty, showCaption = false }) {
  if (rows.length === 0) return h('p', { class: 'empty' }, empty);
  const cellClass = (i) => (columns[i].numeric ? 'numeric' : null);
  const bodyRows = rows.map((row) => {
    const { cells, detail, detailId } = Array.isArray(row) ? { cells: row } : row;
    const tr = h(
      'tr',
      {},
      cells.map((cell, i) =>
        i === 0 ? h('th', { scope: 'row', class: cellClass(i) }, cell) : h('td', { class: cellClass(i) }, cell),
      ),
    );
    if (!detail) return tr;
    return [
      tr,
      h('tr', { id: detailId, class: 'detail-row', hidden: true }, h('td', { colspan: columns.length }, detail)),
    ];
  });
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'data' },
      h('caption', { class: showCaption ? null : 'visually-hidden' }, caption),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          columns.map((c, i) => h('th', { scope: 'col', class: cellClass(i) }, c.label)),
        ),
      ),
      h('tbody', {}, bodyRows),
    ),
  );
}

/** The button that shows and hides a row's detail row (see dataTable). */
export function disclosure(label, detailId) {
  return h(
    'button',
    {
      type: 'button',
      class: 'button ghost small disclosure',
      'aria-expanded': 'false',
      'aria-controls': detailId,
      onclick: (event) => {
        const button = event.currentTarget;
        const open = button.getAttribute('aria-expanded') !== 'true';
        button.setAttribute('aria-expanded', String(open));
        button.closest('table').querySelector(`#${detailId}`).hidden = !open;
      },
    },
    label,
  );
}
