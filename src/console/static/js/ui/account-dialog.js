/** The operator's two levers on an account: its health status and its daily quota. */
import { updateAccount } from '../api.js';
import { h } from '../dom.js';
import { announce, announceError } from './announce.js';
import { showDialog } from './dialog.js';
import { field, select } from './form.js';

const ACCOUNT_STATUSES = ['healthy', 'review', 'paused', 'banned'];

/** Resolves with the updated account, or undefined when nothing changed. */
export async function editAccount(account) {
  const status = select('status', ACCOUNT_STATUSES, account.status);
  const quota = h('input', {
    name: 'daily_quota',
    type: 'number',
    min: 0,
    step: 1,
    required: true,
    value: account.daily_quota,
  });
  const answer = await showDialog({
    title: `Edit ${account.name}`,
    content: [
      field('Status', status, 'paused refuses sends with 403; banned refuses every request with 401.'),
      field('Daily quota', quota, 'Emails per UTC day.'),
    ],
    actions: [
      { label: 'Cancel', value: 'cancel' },
      { label: 'Save', value: 'save', variant: 'primary' },
    ],
  });
  if (answer !== 'save') return undefined;
  const changes = {};
  if (status.value !== account.status) changes.status = status.value;
  if (Number(quota.value) !== account.daily_quota) changes.daily_quota = Number(quota.value);
  if (Object.keys(changes).length === 0) return undefined;
  try {
    const updated = await updateAccount(account.id, changes);
    announce(`${updated.name}: ${updated.status}, quota ${updated.daily_quota}.`);
    return updated;
  } catch (err) {
    announceError(err);
    return undefined;
  }
}
