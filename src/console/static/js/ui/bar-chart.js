/**
 * Per-day bar chart drawn as inline SVG (no chart library, nothing fetched). Each day has one bar per
 * stack, side by side; the series of a stack are piled up in it. The SVG carries a title and a
 * description with the totals, and the numbers are offered as a table too.
 */
import { h, s, uniqueId } from '../dom.js';
import { formatNumber } from '../format.js';
import { dataTable } from './table.js';

const WIDTH = 960;
const HEIGHT = 280;
const MARGIN = { top: 12, right: 8, bottom: 28, left: 44 };
const TICKS = 4;

/** The smallest 1, 2 or 5 times a power of ten at or above `n` / TICKS, so gridlines fall on round numbers. */
function niceCeiling(n) {
  if (n <= TICKS) return TICKS;
  const magnitude = 10 ** Math.floor(Math.log10(n / TICKS));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((m) => m * TICKS >= n);
  return step * TICKS;
}

/**
 * rows: [{day: 'YYYY-MM-DD', <key>: number, ...}], oldest first.
 * stacks: [[{key, label}, ...], ...]: the bars of a day, each a pile of series, coloured by the CSS class
 * `series-<key>`. tableOnly: more series shown only in the table.
 */
export function dailyBarChart({ title, rows, stacks, tableOnly = [] }) {
  const titleId = uniqueId('chart-title');
  const descId = uniqueId('chart-desc');
  const charted = stacks.flat();
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const heightOf = (r, stack) => stack.reduce((sum, x) => sum + r[x.key], 0);
  const max = niceCeiling(Math.max(0, ...rows.flatMap((r) => stacks.map((stack) => heightOf(r, stack)))));
  const y = (v) => MARGIN.top + plotH - (v / max) * plotH;
  const dayW = plotW / Math.max(rows.length, 1);
  const barW = (dayW * 0.8) / stacks.length;
  const labelEvery = Math.ceil(rows.length / 10);
  const total = (key) => rows.reduce((sum, r) => sum + r[key], 0);

  const grid = Array.from({ length: TICKS + 1 }, (_, i) => {
    const v = (max / TICKS) * i;
    return s(
      'g',
      { class: 'tick' },
      s('line', { x1: MARGIN.left, x2: WIDTH - MARGIN.right, y1: y(v), y2: y(v) }),
      s('text', { x: MARGIN.left - 6, y: y(v), 'text-anchor': 'end', 'dominant-baseline': 'middle' }, formatNumber(v)),
    );
  });
  const days = rows.map((r, i) => {
    const x0 = MARGIN.left + i * dayW + dayW * 0.1;
    const bars = stacks.flatMap((stack, j) => {
      let base = 0;
      return stack
        .filter((x) => r[x.key] > 0)
        .map((x) => {
          const rect = s(
            'rect',
            {
              class: `bar series-${x.key}`,
              x: x0 + j * barW,
              y: y(base + r[x.key]),
              width: Math.max(barW - 1, 1),
              height: y(base) - y(base + r[x.key]),
            },
            s('title', {}, `${r.day}: ${formatNumber(r[x.key])} ${x.label.toLowerCase()}`),
          );
          base += r[x.key];
          return rect;
        });
    });
    const label =
      i % labelEvery === 0
        ? s('text', { x: x0 + (dayW * 0.8) / 2, y: HEIGHT - 8, 'text-anchor': 'middle' }, r.day.slice(5))
        : null;
    return s('g', { class: 'day' }, bars, label);
  });

  const columns = [...charted, ...tableOnly];
  return h(
    'figure',
    { class: 'chart' },
    s(
      'svg',
      { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: 'img', 'aria-labelledby': `${titleId} ${descId}`, class: 'chart-svg' },
      s('title', { id: titleId }, title),
      s(
        'desc',
        { id: descId },
        `${rows.length} days from ${rows[0]?.day ?? '—'} to ${rows.at(-1)?.day ?? '—'}, in all: `,
        `${columns.map((x) => `${formatNumber(total(x.key))} ${x.label.toLowerCase()}`).join(', ')}.`,
      ),
      grid,
      days,
    ),
    h(
      'figcaption',
      {},
      h(
        'ul',
        { class: 'legend' },
        charted.map((x) => h('li', {}, h('span', { class: `swatch series-${x.key}`, 'aria-hidden': 'true' }), x.label)),
      ),
      h(
        'details',
        { class: 'chart-data' },
        h('summary', {}, 'Show the numbers'),
        dataTable({
          caption: title,
          empty: 'No days.',
          columns: [{ label: 'Day' }, ...columns.map((x) => ({ label: x.label, numeric: true }))],
          rows: rows.map((r) => [r.day, ...columns.map((x) => formatNumber(r[x.key]))]),
        }),
      ),
    ),
  );
}
