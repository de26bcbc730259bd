/**
 * An account at a glance: status, quota and rates (editable), each stream's complaint and unsubscribe rates
 * against the 0.3 % line, and its sends and outcomes per day.
 */
import { getAccountStats } from '../../api.js';
import { h } from '../../dom.js';
import { formatNumber, formatTime } from '../../format.js';
import { navigate } from '../../router.js';
import { editAccount } from '../../ui/account-dialog.js';
import { bounceRate, complaintRate, quotaUsed } from '../../ui/account-usage.js';
import { dailyBarChart } from '../../ui/bar-chart.js';
import { complianceTable } from '../../ui/compliance.js';
import { field, select } from '../../ui/form.js';
import { fact, section } from '../../ui/page.js';
import { pill } from '../../ui/pill.js';
import { session } from '../../session.js';

const PERIODS = ['7', '30', '90'];
// Two bars a day: the emails accepted, and the outcomes recorded that day piled up. Sent (the step before
// delivered), opens and clicks are not outcomes, so they are in the table only.
const STACKS = [
  [{ key: 'accepted', label: 'Accepted' }],
  [
    { key: 'delivered', label: 'Delivered' },
    { key: 'bounced', label: 'Bounced' },
    { key: 'complained', label: 'Complained' },
  ],
];
const TABLE_ONLY = [
  { key: 'sent', label: 'Sent' },
  { key: 'opened', label: 'Opened' },
  { key: 'clicked', label: 'Clicked' },
];

export async function render({ account, query, refresh }) {
  const days = PERIODS.includes(query.days) ? query.days : '30';
  const stats = await getAccountStats(account.id, Number(days));

  const facts = h(
    'dl',
    { class: 'facts' },
    fact('Status', pill(account.status)),
    fact('Daily quota', formatNumber(account.daily_quota)),
    fact('Used today', quotaUsed(account)),
    fact('Bounce rate', bounceRate(account)),
    fact('Complaint rate', complaintRate(account)),
    fact('Created', formatTime(account.created_at)),
  );
  // Status and quota are the operator's to change.
  const edit = h(
    'button',
    {
      type: 'button',
      class: 'button secondary',
      onclick: async () => {
        if (await editAccount(account)) refresh();
      },
    },
    'Edit status and quota',
  );

  const period = select('days', PERIODS, days);
  period.addEventListener('change', () => navigate(`/accounts/${account.id}/overview`, { days: period.value }));

  return h(
    'div',
    { class: 'stack' },
    section('Health and quota', facts, session.isOperator() ? h('div', { class: 'card-actions' }, edit) : null),
    account.compliance
      ? section(`Compliance, last ${account.compliance.window_days} days`, complianceTable(account.compliance))
      : null,
    section(
      'Sends and outcomes per day',
      h('div', { class: 'toolbar' }, field('Period (days)', period)),
      dailyBarChart({
        title: `Sends and outcomes, last ${days} days (UTC)`,
        rows: stats.days,
        stacks: STACKS,
        // GET /stats (an account's session) counts no `sent`.
        tableOnly: session.isOperator() ? TABLE_ONLY : TABLE_ONLY.filter((x) => x.key !== 'sent'),
      }),
    ),
  );
}
