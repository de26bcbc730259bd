/**
 * Compliance at a glance (docs/deliverability.md): an account's complaint and unsubscribe rates per stream over
 * the last days, each drawn as a bar against the complaint rate Gmail and Yahoo hold bulk senders under, and a
 * domain's DMARC policy. The figures are always in words too; the bars only repeat them.
 */
import { h } from '../dom.js';
import { formatNumber, formatRate } from '../format.js';
import { pill } from './pill.js';

const STREAM_LABELS = { transactional: 'Transactional', broadcast: 'Broadcast' };

/** 0.003 as "0.3 %": the line as people say it (toPrecision drops the float's tail, 0.30000000000000004). */
export function formatLimit(rate) {
  return `${Number((rate * 100).toPrecision(3))} %`;
}

/**
 * A rate's bar on a scale from 0 to `scale`, with the limit's line drawn across it when `limit` is given.
 * Hidden from assistive technology: the cell beside it says the same in words.
 */
function rateBar(value, scale, limit) {
  const fill = h('span', { class: 'rate-fill' });
  // Widths and positions through the CSSOM: the console's style policy allows no inline style attributes.
  fill.style.width = `${Math.min(100, (100 * value) / scale)}%`;
  const track = h('span', { class: 'rate-track' }, fill);
  if (limit !== undefined) {
    const line = h('span', { class: 'rate-limit', title: `Limit ${formatLimit(limit)}` });
    line.style.left = `${(100 * limit) / scale}%`;
    track.append(line);
  }
  return h(
    'span',
    { class: `rate-bar${limit !== undefined && value >= limit ? ' over' : ''}`, 'aria-hidden': 'true' },
    track,
  );
}

/** The rate in words, and whether it is over the line. */
function rateText(value, limit) {
  const over = limit !== undefined && value >= limit;
  return h(
    'span',
    { class: over ? 'rate over' : 'rate' },
    formatRate(value),
    over ? ` (at or over ${formatLimit(limit)})` : null,
  );
}

/**
 * compliance: {window_days, complaint_rate_limit, streams: [{stream, sent, complained, unsubscribed,
 * complaint_rate, unsubscribe_rate, over_complaint_limit}]}, as the management API's account has it.
 */
export function complianceTable(compliance) {
  const limit = compliance.complaint_rate_limit;
  // One scale for every bar, so that bars compare: twice the line, or wider when a rate is past that.
  const scale = Math.max(2 * limit, ...compliance.streams.flatMap((s) => [s.complaint_rate, s.unsubscribe_rate]));
  const caption = `Complaint and unsubscribe rates per stream, last ${compliance.window_days} days, against the ${formatLimit(limit)} complaint line`;
  return h(
    'figure',
    { class: 'compliance' },
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'data compliance-table' },
        h('caption', { class: 'visually-hidden' }, caption),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', { scope: 'col' }, 'Stream'),
            h('th', { scope: 'col', class: 'numeric' }, 'Sent'),
            h('th', { scope: 'col', class: 'numeric' }, 'Complaints'),
            h('th', { scope: 'col' }, `Complaint rate (line at ${formatLimit(limit)})`),
            h('th', { scope: 'col', class: 'numeric' }, 'Unsubscribes'),
            h('th', { scope: 'col' }, 'Unsubscribe rate'),
          ),
        ),
        h(
          'tbody',
          {},
          compliance.streams.map((s) =>
            h(
              'tr',
              { 'data-stream': s.stream },
              h('th', { scope: 'row' }, STREAM_LABELS[s.stream] ?? s.stream),
              h('td', { class: 'numeric' }, formatNumber(s.sent)),
              h('td', { class: 'numeric' }, formatNumber(s.complained)),
              h(
                'td',
                { class: 'complaint-rate' },
                h(
                  'span',
                  { class: 'rate-cell' },
                  rateBar(s.complaint_rate, scale, limit),
                  rateText(s.complaint_rate, limit),
                ),
              ),
              h('td', { class: 'numeric' }, formatNumber(s.unsubscribed)),
              h(
                'td',
                { class: 'unsubscribe-rate' },
                h('span', { class: 'rate-cell' }, rateBar(s.unsubscribe_rate, scale), rateText(s.unsubscribe_rate)),
              ),
            ),
          ),
        ),
      ),
    ),
    h(
      'figcaption',
      { class: 'hint' },
      `Per email sent in the last ${compliance.window_days} days. Gmail and Yahoo expect bulk senders to keep complaints under ${formatLimit(limit)}; the line on each complaint bar marks it. Unsubscribes are counted from one-click unsubscribes.`,
    ),
  );
}

/** dmarc: {published, policy (none | quarantine | reject, or null), record_name}: as the last DNS check found it. */
export function dmarcStatus(dmarc) {
  if (!dmarc?.published)
    return h(
      'span',
      { class: 'dmarc' },
      pill('unverified', 'DMARC not published'),
      ' ',
      h('span', { class: 'dmarc-note' }, 'Gmail and Yahoo require bulk senders to publish a DMARC policy.'),
    );
  return h(
    'span',
    { class: 'dmarc' },
    pill('verified', `DMARC ${dmarc.policy === null ? 'published' : `p=${dmarc.policy}`}`),
    ' ',
    h('span', { class: 'dmarc-note' }, `Found at ${dmarc.record_name}`),
  );
}
