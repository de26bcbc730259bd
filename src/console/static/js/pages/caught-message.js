/** One caught message as a mail client would show it: HTML (sandboxed), text and every header. */
import { getCaughtMessage } from '../api.js';
import { h } from '../dom.js';
import { formatAddresses, formatBytes, formatTime } from '../format.js';
import { href } from '../router.js';
import { mailPreview } from '../ui/mail-preview.js';
import { fact, pageHeader, section } from '../ui/page.js';
import { dataTable } from '../ui/table.js';

export async function render({ params }) {
  const { message, html, text, headers } = await getCaughtMessage(params.id);
  return h(
    'div',
    { class: 'page' },
    pageHeader(message.subject || '(no subject)', { crumbs: [['Mail catcher', href('/catcher')]] }),
    section(
      'Envelope',
      h(
        'dl',
        { class: 'facts' },
        fact('From', message.from),
        fact('To', formatAddresses(message.to)),
        fact('Received', formatTime(message.received_at)),
        fact('Size', formatBytes(message.size)),
        fact('Message-ID', h('code', {}, message.message_id || '—')),
        fact('File', h('code', {}, message.path)),
      ),
    ),
    section('Content', mailPreview({ html, text, subject: message.subject })),
    section(
      'Headers',
      dataTable({
        caption: 'Headers',
        empty: 'No headers.',
        columns: [{ label: 'Name' }, { label: 'Value' }],
        rows: Object.entries(headers).map(([name, value]) => [name, h('code', { class: 'header-value' }, value)]),
      }),
    ),
  );
}
