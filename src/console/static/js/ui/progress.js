/** A batch job's progress: sent and failed as two segments of one bar, with the counts in words. */
import { h } from '../dom.js';

export function batchProgress({ total_count: total, sent_count: sent, failed_count: failed }) {
  const done = sent + failed;
  const share = (n) => (total === 0 ? '0%' : `${(100 * n) / total}%`);
  const sentBar = h('span', { class: 'bar-sent' });
  const failedBar = h('span', { class: 'bar-failed' });
  // Widths through the CSSOM: allowed by the style policy, unlike inline style attributes in markup.
  sentBar.style.width = share(sent);
  failedBar.style.width = share(failed);
  const words = `${sent} of ${total} sent${failed ? `, ${failed} failed` : ''}`;
  return h(
    'div',
    { class: 'progress' },
    h(
      'div',
      {
        class: 'progress-track',
        role: 'progressbar',
        'aria-valuemin': 0,
        'aria-valuemax': total,
        'aria-valuenow': done,
        'aria-valuetext': words,
        'aria-label': 'Batch progress',
      },
      sentBar,
      failedBar,
    ),
    h(
      'span',
      { class: 'progress-text' },
      `${done}/${total}`,
      failed ? h('span', { class: 'failed-count' }, ` (${failed} failed)`) : null,
    ),
  );
}
