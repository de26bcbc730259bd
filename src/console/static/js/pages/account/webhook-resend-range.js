/** The deliveries page's "Re-send discarded" form: every discarded delivery of a time range, queued again. */
import { resendWebhookDeliveries } from '../../api.js';
import { h } from '../../dom.js';
import { announce, announceError } from '../../ui/announce.js';
import { field, onSubmit } from '../../ui/form.js';

/** 'YYYY-MM-DDTHH:MM' in the browser's time zone: what a datetime-local input holds. */
function localInputValue(date) {
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

/**
 * From/to datetime inputs (the operator's local time, to the minute; from defaults to a day ago, to to the next
 * minute so that what came in this minute is in the range, the end being exclusive) that call the bulk
 * re-send and say how many were queued. The API queues at most 1000 per call, hence "more remain".
 * `reload` refreshes the list after.
 */
export function resendRangeForm(webhook, reload) {
  const now = new Date();
  const from = h('input', {
    name: 'from',
    type: 'datetime-local',
    required: true,
    value: localInputValue(new Date(now.getTime() - 86_400_000)),
  });
  const to = h('input', {
    name: 'to',
    type: 'datetime-local',
    required: true,
    value: localInputValue(new Date(now.getTime() + 60_000)),
  });
  const result = h('span', { class: 'resend-result' });
  return onSubmit(
    h(
      'form',
      { class: 'grid-form' },
      field('From', from, 'Discarded deliveries whose event came in at or after this time…'),
      field('To', to, '…and before this one, in your time zone.'),
      h(
        'div',
        { class: 'form-actions' },
        h('button', { type: 'submit', class: 'button primary' }, 'Re-send discarded'),
        result,
      ),
    ),
    async () => {
      result.textContent = '';
      try {
        // new Date() reads a datetime-local value in the browser's zone; the API wants an instant with its zone.
        const answer = await resendWebhookDeliveries(webhook.id, {
          from: new Date(from.value).toISOString(),
          to: new Date(to.value).toISOString(),
        });
        const queued = answer.queued ?? 0;
        result.textContent = answer.has_more ? `${queued} queued; more remain: run again` : `${queued} queued`;
        announce(
          `${queued} discarded ${queued === 1 ? 'delivery' : 'deliveries'} of ${webhook.url} queued again${answer.has_more ? '; more remain: run again' : ''}.`,
        );
        await reload().catch(announceError);
      } catch (err) {
        announceError(err);
      }
    },
  );
}
