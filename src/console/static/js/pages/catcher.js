/** The mail the built-in catcher received (when no SMTP_URL is set, nothing leaves the machine). */
import { listCaughtMessages } from '../api.js';
import { h, replaceChildren } from '../dom.js';
import { formatAddresses, formatBytes, formatTime } from '../format.js';
import { href } from '../router.js';
import { announce, announceError } from '../ui/announce.js';
import { pageHeader, section } from '../ui/page.js';
import { dataTable } from '../ui/table.js';

const LIMIT = 100;

export async function render() {
  const list = h('div');

  async function load() {
    const { messages } = await listCaughtMessages(LIMIT);
    replaceChildren(
      list,
      dataTable({
        caption: 'Caught messages, newest first',
        empty: 'No mail caught yet. The catcher keeps mail only when SMTP_URL is unset.',
        columns: [
          { label: 'Subject' },
          { label: 'From' },
          { label: 'To' },
          { label: 'Received' },
          { label: 'Size', numeric: true },
        ],
        rows: messages.map((m) => [
          h('a', { href: href(`/catcher/${m.id}`) }, m.subject || '(no subject)'),
          m.from,
          formatAddresses(m.to),
          formatTime(m.received_at),
          formatBytes(m.size),
        ]),
      }),
    );
  }

  const refresh = h(
    'button',
    {
      type: 'button',
      class: 'button secondary',
      onclick: () => load().then(() => announce('Caught mail refreshed.'), announceError),
    },
    'Refresh',
  );
  await load();
  return h(
    'div',
    { class: 'page' },
    pageHeader('Mail catcher', { actions: refresh }),
    section(`Latest ${LIMIT} messages`, list),
  );
}
