/** Addresses the account no longer sends to (after a hard bounce or a complaint); the operator may lift one. */
import { deleteSuppression, listSuppressions } from '../../api.js';
import { h, replaceChildren } from '../../dom.js';
import { formatTime } from '../../format.js';
import { href } from '../../router.js';
import { announce, announceError } from '../../ui/announce.js';
import { confirmAction } from '../../ui/dialog.js';
import { section } from '../../ui/page.js';
import { pill } from '../../ui/pill.js';
import { dataTable } from '../../ui/table.js';

export async function render({ account }) {
  const list = h('div');

  async function load() {
    const { suppressions } = await listSuppressions(account.id);
    replaceChildren(
      list,
      dataTable({
        caption: `Suppressed addresses of ${account.name}`,
        empty: 'No suppressed addresses.',
        columns: [
          { label: 'Address' },
          { label: 'Reason' },
          { label: 'Email' },
          { label: 'Since' },
          { label: h('span', { class: 'visually-hidden' }, 'Actions') },
        ],
        rows: suppressions.map((x) => [
          x.email_address,
          pill(x.reason),
          x.email_id ? h('a', { href: href(`/emails/${x.email_id}`) }, h('code', {}, x.email_id)) : '—',
          formatTime(x.created_at),
          h(
            'button',
            {
              type: 'button',
              class: 'button secondary small',
              'aria-label': `Remove ${x.email_address}`,
              onclick: () => remove(x),
            },
            'Remove',
          ),
        ]),
      }),
    );
  }

  async function remove(item) {
    const confirmed = await confirmAction({
      title: `Send to ${item.email_address} again?`,
      message: `The address was suppressed after a ${item.reason}. Sending to it again can hurt the account's rates.`,
      confirmLabel: 'Remove suppression',
    });
    if (!confirmed) return;
    try {
      await deleteSuppression(item.id);
      announce(`${item.email_address} removed from the suppression list.`);
      await load();
    } catch (err) {
      announceError(err);
    }
  }

  await load();
  return section('Suppressions', list);
}
