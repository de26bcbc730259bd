/** Scheduled emails with the spec's status filter; waiting ones can be cancelled. */
import { cancelScheduledEmail, listScheduledEmails } from '../../api.js';
import { h, replaceChildren } from '../../dom.js';
import { formatAddresses, formatTime } from '../../format.js';
import { navigate } from '../../router.js';
import { announce, announceError } from '../../ui/announce.js';
import { confirmAction } from '../../ui/dialog.js';
import { oneOf, statusFilter } from '../../ui/form.js';
import { pagedTable, pageOf } from '../../ui/pagination.js';
import { section } from '../../ui/page.js';
import { pill } from '../../ui/pill.js';

// The spec's filter values; `scheduled` lists those still waiting, which read `enqueued`.
const STATUSES = ['scheduled', 'sent', 'cancelled'];
const LIMIT = 20;

export async function render({ account, query }) {
  const status = oneOf(STATUSES, query.status);
  const page = pageOf(query);
  const path = `/accounts/${account.id}/scheduled`;
  const list = h('div');

  async function load() {
    const { scheduled_emails: items, total_count: total } = await listScheduledEmails(account.id, {
      status,
      page,
      limit: LIMIT,
    });
    replaceChildren(
      list,
      pagedTable(
        {
          caption: `Scheduled emails of ${account.name}`,
          empty: 'No scheduled emails.',
          columns: [
            { label: 'Subject' },
            { label: 'To' },
            { label: 'Send at' },
            { label: 'Status' },
            { label: 'Attempts', numeric: true },
            { label: 'Created' },
            { label: h('span', { class: 'visually-hidden' }, 'Actions') },
          ],
          rows: items.map((x) => [
            h('span', {}, x.subject || '(no subject)', h('span', { class: 'sub' }, x.id)),
            formatAddresses(x.to),
            formatTime(x.scheduled_at),
            pill(x.status),
            String(x.attempts),
            formatTime(x.created_at),
            x.status === 'enqueued'
              ? h(
                  'button',
                  {
                    type: 'button',
                    class: 'button danger small',
                    'aria-label': `Cancel ${x.subject}`,
                    onclick: () => cancel(x),
                  },
                  'Cancel',
                )
              : null,
          ]),
        },
        { page, pageSize: LIMIT, total, label: 'Scheduled emails', onPage: (p) => navigate(path, { status, page: p }) },
      ),
    );
  }

  async function cancel(item) {
    const confirmed = await confirmAction({
      title: 'Cancel this scheduled email?',
      message: `“${item.subject}” to ${formatAddresses(item.to)} will not be sent.`,
      confirmLabel: 'Cancel email',
    });
    if (!confirmed) return;
    try {
      const { message } = await cancelScheduledEmail(item.id);
      announce(message || 'Scheduled email cancelled.');
      await load();
    } catch (err) {
      announceError(err);
    }
  }

  await load();
  return section(
    'Scheduled emails',
    h(
      'div',
      { class: 'toolbar' },
      statusFilter(STATUSES, status, (s) => navigate(path, { status: s })),
    ),
    list,
  );
}
