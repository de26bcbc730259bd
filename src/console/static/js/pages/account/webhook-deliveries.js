/** The events sent to one webhook, each with every attempt; discarded ones can be sent again, one or a time range. */
import { ApiError, listWebhookDeliveries, listWebhooks, resendWebhookDelivery } from '../../api.js';
import { h, replaceChildren, uniqueId } from '../../dom.js';
import { formatTime } from '../../format.js';
import { href, navigate } from '../../router.js';
import { announce, announceError } from '../../ui/announce.js';
import { oneOf, statusFilter } from '../../ui/form.js';
import { section } from '../../ui/page.js';
import { pill } from '../../ui/pill.js';
import { dataTable, disclosure } from '../../ui/table.js';
import { resendRangeForm } from './webhook-resend-range.js';

const STATUSES = ['pending', 'succeeded', 'discarded'];

export async function render({ account, itemId, query }) {
  const { webhooks } = await listWebhooks(account.id);
  const webhook = webhooks.find((w) => w.id === itemId);
  if (!webhook) throw new ApiError(404, 'not found', `webhook ${itemId} not found`);
  const status = oneOf(STATUSES, query.status);
  const list = h('div');

  async function load() {
    const { deliveries } = await listWebhookDeliveries(webhook.id, { status, limit: 100 });
    replaceChildren(
      list,
      dataTable({
        caption: `Deliveries to ${webhook.url}, newest first`,
        empty: 'No deliveries yet.',
        columns: [
          { label: 'Event' },
          { label: 'Email' },
          { label: 'Status' },
          { label: 'Attempts' },
          { label: 'Created' },
          { label: h('span', { class: 'visually-hidden' }, 'Actions') },
        ],
        rows: deliveries.map((d) => {
          const detailId = uniqueId('attempts');
          return {
            detailId,
            detail: attemptsTable(d),
            cells: [
              h('span', {}, pill(d.event_type), h('span', { class: 'sub' }, d.event_id || d.id)),
              d.email_id ? h('a', { href: href(`/emails/${d.email_id}`) }, h('code', {}, d.email_id)) : '—',
              // Why a discarded one was: retries_exhausted, webhook_disabled or webhook_deleted.
              h(
                'span',
                {},
                pill(d.status),
                d.discard_reason ? h('span', { class: 'sub' }, d.discard_reason.replaceAll('_', ' ')) : null,
              ),
              disclosure(attemptsSummary(d.attempts ?? []), detailId),
              formatTime(d.created_at),
              d.status === 'discarded'
                ? h(
                    'button',
                    {
                      type: 'button',
                      class: 'button primary small',
                      'aria-label': `Resend ${d.event_type} ${d.id}`,
                      onclick: (e) => resend(d, e.currentTarget),
                    },
                    'Resend',
                  )
                : null,
            ],
          };
        }),
      }),
    );
  }

  async function resend(delivery, button) {
    button.disabled = true;
    try {
      await resendWebhookDelivery(delivery.id);
      announce(`The ${delivery.event_type} event is being sent again.`);
      await load();
    } catch (err) {
      announceError(err);
      button.disabled = false;
    }
  }

  const filter = statusFilter(STATUSES, status, (s) =>
    navigate(`/accounts/${account.id}/webhooks/${webhook.id}`, { status: s }),
  );
  const refresh = h(
    'button',
    {
      type: 'button',
      class: 'button secondary',
      onclick: () => load().then(() => announce('Deliveries refreshed.'), announceError),
    },
    'Refresh',
  );

  await load();
  return h(
    'div',
    { class: 'stack' },
    h('p', {}, h('a', { href: href(`/accounts/${account.id}/webhooks`) }, '← All webhooks')),
    section(`Deliveries to ${webhook.url}`, h('div', { class: 'toolbar' }, filter, refresh), list),
    section('Re-send discarded', resendRangeForm(webhook, load)),
  );
}

/** '4 attempts · last HTTP 500': how it went, on the button that shows each attempt. */
function attemptsSummary(attempts) {
  const last = attempts.at(-1);
  const outcome = !last
    ? 'none yet'
    : last.status_code
      ? `last HTTP ${last.status_code}`
      : `last: ${last.error || 'no answer'}`;
  return `${attempts.length} ${attempts.length === 1 ? 'attempt' : 'attempts'} · ${outcome}`;
}

function attemptsTable(delivery) {
  return dataTable({
    caption: `Attempts of delivery ${delivery.id}`,
    empty: 'No attempt yet.',
    columns: [
      { label: 'Attempt', numeric: true },
      { label: 'Started' },
      { label: 'Status code', numeric: true },
      { label: 'Latency', numeric: true },
      { label: 'Response' },
      { label: 'Error' },
    ],
    rows: (delivery.attempts ?? []).map((a) => [
      String(a.attempt),
      formatTime(a.started_at),
      a.status_code ? String(a.status_code) : '—',
      `${a.latency_ms} ms`,
      a.response_excerpt ? h('code', { class: 'excerpt' }, a.response_excerpt) : '—',
      a.error || '—',
    ]),
  });
}
