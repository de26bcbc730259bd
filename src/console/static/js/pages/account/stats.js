/**
 * An account's stats (GET /stats, docs/api.md "Stats"): recipients per day as a chart, then one grouping as a
 * table with each group's delivered, bounced and deferred rates, so "outlook.com bounces 12 %" reads at a
 * glance; by recipient domain each row shows that domain's recent bounce and deferral replies.
 */
import { getStats } from '../../api.js';
import { h } from '../../dom.js';
import { formatNumber, formatRate } from '../../format.js';
import { navigate } from '../../router.js';
import { dailyBarChart } from '../../ui/bar-chart.js';
import { dataTable } from '../../ui/table.js';
import { field, select } from '../../ui/form.js';
import { section } from '../../ui/page.js';

const PERIODS = ['7', '30', '90'];
const GROUPS = [
  { id: 'recipient_domain', label: 'Recipient domain' },
  { id: 'domain', label: 'Sender domain' },
  { id: 'tag', label: 'Tag' },
  { id: 'stream', label: 'Stream' },
];
// Two bars a day: the recipients accepted, and what became of them piled up.
const STACKS = [
  [{ key: 'accepted', label: 'Accepted' }],
  [
    { key: 'delivered', label: 'Delivered' },
    { key: 'bounced', label: 'Bounced' },
    { key: 'complained', label: 'Complained' },
  ],
];
const TABLE_ONLY = [
  { key: 'deferred', label: 'Deferred' },
  { key: 'opened', label: 'Opened' },
  { key: 'clicked', label: 'Clicked' },
  { key: 'unsubscribed', label: 'Unsubscribed' },
];
/** A bounce rate from here up is shown strong: a receiver at that rate is refusing the mail, not a few addresses. */
const HIGH_BOUNCE = 0.05;

const DAY_MS = 86_400_000;

/** A count and its share of the accepted recipients: `12 (3.40 %)`. */
function withRate(n, accepted, strongFrom) {
  const rate = accepted > 0 ? n / accepted : 0;
  const text = `${formatNumber(n)} (${formatRate(rate)})`;
  return strongFrom !== undefined && accepted > 0 && rate >= strongFrom ? h('strong', {}, text) : text;
}

function repliesCell(replies) {
  if (!replies || replies.length === 0) return '—';
  return h(
    'ul',
    { class: 'sample-replies' },
    replies.map((r) => h('li', {}, h('code', {}, r))),
  );
}

export async function render({ account, query }) {
  const days = PERIODS.includes(query.days) ? query.days : '30';
  const group = GROUPS.some((g) => g.id === query.group) ? query.group : 'recipient_domain';
  const groupLabel = GROUPS.find((g) => g.id === group).label;
  // The last `days` UTC days, today included (the API counts whole UTC days).
  const today = new Date().toISOString().slice(0, 10);
  const from = new Date(Date.parse(`${today}T00:00:00Z`) - (Number(days) - 1) * DAY_MS).toISOString();
  const [daily, grouped] = await Promise.all([
    getStats(account.id, { from, group_by: 'day' }),
    getStats(account.id, { from, group_by: group }),
  ]);

  const go = (changes) => navigate(`/accounts/${account.id}/stats`, { days, group, ...changes });
  const period = select('days', PERIODS, days);
  period.addEventListener('change', () => go({ days: period.value }));
  const by = h(
    'select',
    { name: 'group' },
    GROUPS.map((g) => h('option', { value: g.id, selected: g.id === group }, g.label)),
  );
  by.addEventListener('change', () => go({ group: by.value }));

  // Biggest first: the groups that carry the mail are the ones whose rates matter.
  const rows = [...grouped.stats].sort((a, b) => b.accepted - a.accepted || a.key.localeCompare(b.key));
  const withReplies = group === 'recipient_domain';
  const columns = [
    { label: groupLabel },
    { label: 'Accepted', numeric: true },
    { label: 'Delivered', numeric: true },
    { label: 'Bounced', numeric: true },
    { label: 'Deferred', numeric: true },
    { label: 'Complained', numeric: true },
    { label: 'Opened', numeric: true },
    { label: 'Clicked', numeric: true },
    { label: 'Unsubscribed', numeric: true },
    ...(withReplies ? [{ label: 'Recent bounce and deferral replies' }] : []),
  ];

  return h(
    'div',
    { class: 'stack' },
    h(
      'div',
      { class: 'toolbar' },
      field('Period (days)', period),
      field('Group by', by, 'Recipients of the emails accepted in the period, by what became of them.'),
    ),
    section(
      'Recipients per day',
      dailyBarChart({
        title: `Recipients accepted and their outcomes, last ${days} days (UTC)`,
        rows: daily.stats.map(({ key, ...counts }) => ({ day: key, ...counts })),
        stacks: STACKS,
        tableOnly: TABLE_ONLY,
      }),
    ),
    section(
      `By ${groupLabel.toLowerCase()}`,
      dataTable({
        caption: `Recipients by ${groupLabel.toLowerCase()}, last ${days} days`,
        empty: `No mail accepted in the last ${days} days.`,
        columns,
        rows: rows.map((r) => [
          r.key,
          formatNumber(r.accepted),
          withRate(r.delivered, r.accepted),
          withRate(r.bounced, r.accepted, HIGH_BOUNCE),
          withRate(r.deferred, r.accepted),
          formatNumber(r.complained),
          formatNumber(r.opened),
          formatNumber(r.clicked),
          formatNumber(r.unsubscribed),
          ...(withReplies ? [repliesCell(r.sample_replies)] : []),
        ]),
      }),
    ),
  );
}
