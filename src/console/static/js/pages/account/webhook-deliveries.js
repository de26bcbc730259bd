/** The events sent to one webhook, each with every attempt; discarded ones can be sent again. */
import { ApiError, listWebhookDeliveries, listWebhooks, resendWebhookDelivery } from '../../api.js';
import { h, replaceChildren } from '../../dom.js';
import { formatTime } from '../../format.js';
import { href, navigate } from '../../router.js';
import { announce, announceError } from '../../ui/announce.js';
import { field, select } from '../../ui/form.js';
import { section } from '../../ui/page.js';
import { pill } from '../../ui/pill.js';
import { dataTable } from '../../ui/table.js';

const STATUSES = ['pending', 'succeeded', 'discarded'];

export async function render({ account, itemId, query }) {
  const { webhooks } = await listWebhooks(account.id);
  const webhook = webhooks.find((w) => w.id === itemId);
  if (!webhook) throw new ApiError(404, 'not found', `webhook ${itemId} not found`);
  const status = STATUSES.includes(query.status) ? query.status : '';
  const list = h('div', { class: 'stack' });

  async function load() {
    const { deliveries } = await listWebhookDeliveries(webhook.id, { status, limit: 100 });
    replaceChildren(list, deliveries.length ? deliveries.map((d) => deliveryCard(d, load)) : h('p', { class: 'empty' }, 'No deliveries yet.'));
  }

  const filter = select('status', STATUSES, status, 'all');
  filter.addEventListener('change', () => navigate(`/accounts/${account.id}/webhooks/${webhook.id}`, { status: filter.value }));
  const refresh = h('button', { type: 'button', class: 'button secondary', onclick: () => load().then(() => announce('Deliveries refreshed.'), announceError) }, 'Refresh');

  await load();
  return h('div', { class: 'stack' },
    h('p', {}, h('a', { href: href(`/accounts/${account.id}/webhooks`) }, '← All webhooks')),
    section(`Deliveries to ${webhook.url}`,
      h('div', { class: 'toolbar' }, field('Status', filter), refresh),
      list));
}

function deliveryCard(delivery, reload) {
  const resend = async (button) => {
    button.disabled = true;
    try {
      await resendWebhookDelivery(delivery.id);
      announce(`Delivery ${delivery.id} sent again.`);
      await reload();
    } catch (err) {
      announceError(err);
      button.disabled = false;
    }
  };
  const attempts = delivery.attempts ?? [];
  return h('article', { class: 'card delivery', 'data-delivery': delivery.id },
    h('div', { class: 'card-head' },
      h('h3', { class: 'card-title' }, pill(delivery.event_type), ' ', h('code', {}, delivery.event_id || delivery.id)),
      pill(delivery.status)),
    h('p', { class: 'sub' },
      delivery.email_id ? ['Email ', h('a', { href: href(`/emails/${delivery.email_id}`) }, delivery.email_id), ' · '] : null,
      `Created ${formatTime(delivery.created_at)}`,
      delivery.completed_at ? ` · finished ${formatTime(delivery.completed_at)}` : null),
    dataTable({
      caption: `Attempts of delivery ${delivery.id}`,
      empty: 'No attempt yet.',
      columns: [{ label: 'Attempt', numeric: true }, { label: 'Started' }, { label: 'Status code', numeric: true }, { label: 'Latency', numeric: true }, { label: 'Response' }, { label: 'Error' }],
      rows: attempts.map((a) => [
        String(a.attempt),
        formatTime(a.started_at),
        a.status_code ? String(a.status_code) : '—',
        `${a.latency_ms} ms`,
        a.response_excerpt ? h('code', { class: 'excerpt' }, a.response_excerpt) : '—',
        a.error || '—',
      ]),
    }),
    delivery.status === 'discarded'
      ? h('div', { class: 'card-actions' }, h('button', { type: 'button', class: 'button primary small', onclick: (e) => resend(e.currentTarget) }, 'Resend'))
      : null);
}
