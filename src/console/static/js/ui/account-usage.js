/** Today's use of an account's quota and its health-window rates, flagged at the spec's thresholds. */
import { h } from '../dom.js';
import { formatNumber, formatRate } from '../format.js';

// The spec's reasons for suspension: bounce rate at or above 4 %, complaint rate at or above 0.08 %.
const BOUNCE_LIMIT = 0.04;
const COMPLAINT_LIMIT = 0.0008;

export function quotaUsed({ sent_today: used, daily_quota: quota }) {
  if (used === undefined) return '—';
  const meter = h('meter', {
    min: 0,
    max: quota || 1,
    value: used,
    high: (quota || 1) * 0.8,
    optimum: 0,
    'aria-hidden': 'true',
  });
  return h('span', { class: 'quota-used' }, meter, `${formatNumber(used)} / ${formatNumber(quota)}`);
}

function rate(value, limit) {
  const over = value !== undefined && value >= limit;
  return h(
    'span',
    { class: over ? 'rate over' : 'rate' },
    formatRate(value),
    over ? h('span', { class: 'visually-hidden' }, ' (over the limit)') : null,
  );
}

export const bounceRate = (account) => rate(account.bounce_rate, BOUNCE_LIMIT);
export const complaintRate = (account) => rate(account.complaint_rate, COMPLAINT_LIMIT);
