/** Every account with its health, quota and today's usage; create one; edit status and quota. */
import { createAccount, listAccounts } from '../api.js';
import { h, replaceChildren } from '../dom.js';
import { formatNumber, formatTime } from '../format.js';
import { href } from '../router.js';
import { editAccount } from '../ui/account-dialog.js';
import { bounceRate, complaintRate, quotaUsed } from '../ui/account-usage.js';
import { announce, announceError } from '../ui/announce.js';
import { field, onSubmit } from '../ui/form.js';
import { pageHeader, section } from '../ui/page.js';
import { pill } from '../ui/pill.js';
import { dataTable } from '../ui/table.js';

export async function render() {
  const list = h('div');

  async function load() {
    const { accounts } = await listAccounts();
    replaceChildren(
      list,
      dataTable({
        caption: 'Accounts',
        empty: 'No accounts yet.',
        columns: [
          { label: 'Name' },
          { label: 'Status' },
          { label: 'Daily quota', numeric: true },
          { label: 'Used today' },
          { label: 'Bounce rate', numeric: true },
          { label: 'Complaint rate', numeric: true },
          { label: 'Created' },
          { label: h('span', { class: 'visually-hidden' }, 'Actions') },
        ],
        rows: accounts.map((a) => [
          h('a', { href: href(`/accounts/${a.id}`) }, a.name, h('span', { class: 'sub' }, a.id)),
          pill(a.status),
          formatNumber(a.daily_quota),
          quotaUsed(a),
          bounceRate(a),
          complaintRate(a),
          formatTime(a.created_at),
          h(
            'button',
            {
              type: 'button',
              class: 'button secondary small',
              'aria-label': `Edit ${a.name}`,
              onclick: async () => {
                if (await editAccount(a)) await load().catch(announceError);
              },
            },
            'Edit',
          ),
        ]),
      }),
    );
  }

  const name = h('input', { name: 'name', required: true, maxlength: 200, autocomplete: 'off' });
  const form = onSubmit(
    h(
      'form',
      { class: 'inline-form' },
      field('Account name', name),
      h('button', { type: 'submit', class: 'button primary' }, 'Create account'),
    ),
    async () => {
      try {
        const account = await createAccount(name.value.trim());
        name.value = '';
        announce(`Account ${account.name} created.`);
        await load();
      } catch (err) {
        announceError(err);
      }
    },
  );

  await load();
  return h(
    'div',
    { class: 'page' },
    pageHeader('Accounts'),
    section('All accounts', list),
    section(
      'New account',
      h(
        'p',
        { class: 'hint' },
        'A new account is healthy with a quota of 100 emails a day; its first verified domain raises it to 1,000.',
      ),
      form,
    ),
  );
}
