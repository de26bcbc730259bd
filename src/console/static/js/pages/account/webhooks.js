/**
 * Webhooks: create (the signing secret is shown once), see which are disabled (their deliveries kept failing)
 * and enable them, send a test request, rotate the signing secret (the new one shown once), open deliveries, delete.
 */
import {
  createWebhook,
  deleteWebhook,
  enableWebhook,
  listWebhooks,
  rotateWebhookSecret,
  verifyWebhook,
} from '../../api.js';
import { h, replaceChildren, uniqueId } from '../../dom.js';
import { formatTime } from '../../format.js';
import { href } from '../../router.js';
import { announce, announceError } from '../../ui/announce.js';
import { confirmAction } from '../../ui/dialog.js';
import { pill } from '../../ui/pill.js';
import { field, onSubmit } from '../../ui/form.js';
import { section } from '../../ui/page.js';
import { createThenShowSecret, showSecretOnce } from '../../ui/secret-dialog.js';
import { dataTable } from '../../ui/table.js';

const EVENT_TYPES = ['send', 'delivery', 'bounce', 'complaint', 'reject', 'open', 'click'];

export async function render({ account }) {
  const list = h('div');

  async function load() {
    const { webhooks } = await listWebhooks(account.id);
    replaceChildren(
      list,
      dataTable({
        caption: `Webhooks of ${account.name}`,
        empty: 'No webhooks yet.',
        columns: [
          { label: 'URL' },
          { label: 'Events' },
          { label: 'State' },
          { label: 'Created' },
          { label: 'Test request' },
          { label: h('span', { class: 'visually-hidden' }, 'Actions') },
        ],
        rows: webhooks.map((w) => {
          const result = h('span', { class: 'verify-result', 'data-webhook': w.id });
          return [
            h('span', { class: 'url' }, w.url, h('span', { class: 'sub' }, w.id)),
            w.events.join(', '),
            stateOf(w, enable),
            formatTime(w.created_at),
            h(
              'div',
              { class: 'row-actions' },
              h(
                'button',
                {
                  type: 'button',
                  class: 'button secondary small',
                  'aria-label': `Verify ${w.url}`,
                  onclick: (e) => verify(w, e.currentTarget, result),
                },
                'Verify',
              ),
              result,
            ),
            h(
              'div',
              { class: 'row-actions' },
              h(
                'a',
                { class: 'button secondary small', href: href(`/accounts/${account.id}/webhooks/${w.id}`) },
                'Deliveries',
              ),
              h(
                'button',
                {
                  type: 'button',
                  class: 'button secondary small',
                  'aria-label': `Rotate secret of ${w.url}`,
                  onclick: () => rotate(w),
                },
                'Rotate secret',
              ),
              h(
                'button',
                {
                  type: 'button',
                  class: 'button danger small',
                  'aria-label': `Delete webhook ${w.url}`,
                  onclick: () => remove(w),
                },
                'Delete',
              ),
            ),
          ];
        }),
      }),
    );
  }

  async function enable(webhook) {
    try {
      await enableWebhook(webhook.id);
      announce(`Webhook ${webhook.url} enabled: new events are sent again.`);
      await load();
    } catch (err) {
      announceError(err);
    }
  }

  async function rotate(webhook) {
    const confirmed = await confirmAction({
      title: 'Rotate the signing secret?',
      message:
        `${webhook.url} gets a new secret. Requests carry signatures with both the old and the new one for 24 hours, ` +
        'so the receiver can switch to the new secret in that time.',
      confirmLabel: 'Rotate secret',
    });
    if (!confirmed) return;
    let rotated;
    try {
      rotated = await rotateWebhookSecret(webhook.id);
    } catch (err) {
      announceError(err);
      return;
    }
    await load().catch(announceError);
    await showSecretOnce({
      title: 'New webhook signing secret',
      label: 'Signing secret',
      secret: rotated.secret,
      note: rotated.previous_secret_until
        ? `The old secret still signs every request until ${formatTime(rotated.previous_secret_until)}; after that only this one does.`
        : 'The old secret no longer signs.',
    });
  }

  async function remove(webhook) {
    const confirmed = await confirmAction({
      title: 'Delete this webhook?',
      message: `${webhook.url} will receive no more events.`,
      confirmLabel: 'Delete webhook',
    });
    if (!confirmed) return;
    try {
      await deleteWebhook(webhook.id);
      announce('Webhook deleted.');
      await load();
    } catch (err) {
      announceError(err);
    }
  }

  const form = newWebhookForm(account, load);

  await load();
  return h('div', { class: 'stack' }, section('New webhook', form), section('Webhooks', list));
}

/** Active, or disabled since when and why, with the button that enables it again. */
function stateOf(webhook, enable) {
  if (!webhook.disabled_at) return pill('active');
  return h(
    'div',
    { class: 'webhook-state' },
    pill('disabled'),
    h('span', { class: 'sub' }, `since ${formatTime(webhook.disabled_at)}: ${webhook.disabled_reason ?? ''}`),
    h(
      'button',
      {
        type: 'button',
        class: 'button secondary small',
        'aria-label': `Enable ${webhook.url}`,
        onclick: () => enable(webhook),
      },
      'Enable',
    ),
  );
}

/** Sends the signed test request and shows its answer in `result`, next to the row's button. */
async function verify(webhook, button, result) {
  button.disabled = true;
  result.className = 'verify-result';
  result.textContent = 'Sending…';
  try {
    const { success, status_code: code } = await verifyWebhook(webhook.id);
    const answer = code ? `HTTP ${code}` : 'no answer';
    result.className = `verify-result ${success ? 'ok' : 'failed'}`;
    result.textContent = success ? `Success: ${answer}` : `Failed: ${answer}`;
    announce(
      `Test request to ${webhook.url}: ${success ? 'success' : 'failed'}, ${answer}.`,
      success ? 'info' : 'error',
    );
  } catch (err) {
    result.className = 'verify-result failed';
    result.textContent = `Error: ${err.message}`;
    announceError(err);
  } finally {
    button.disabled = false;
  }
}

/** The form that creates a webhook for the event types ticked; `reload` refreshes the list after. */
function newWebhookForm(account, reload) {
  const url = h('input', {
    name: 'url',
    type: 'url',
    required: true,
    placeholder: 'https://example.com/hooks/mail',
    autocomplete: 'off',
    spellcheck: 'false',
  });
  const boxes = EVENT_TYPES.map((type) =>
    h('input', { type: 'checkbox', name: 'events', value: type, id: uniqueId(`event-${type}`), checked: true }),
  );
  return onSubmit(
    h(
      'form',
      { class: 'grid-form' },
      field('Endpoint URL', url, 'Receives a signed POST for each selected event (X-Mail-Signature).'),
      h(
        'fieldset',
        { class: 'checkboxes' },
        h('legend', {}, 'Events'),
        boxes.map((box) => h('div', { class: 'check' }, box, h('label', { for: box.id }, box.value))),
      ),
      h('div', { class: 'form-actions' }, h('button', { type: 'submit', class: 'button primary' }, 'Create webhook')),
    ),
    async (f) => {
      const events = boxes.filter((b) => b.checked).map((b) => b.value);
      if (events.length === 0) {
        announce('Choose at least one event.', 'error');
        boxes[0].focus();
        return;
      }
      await createThenShowSecret(
        f,
        () => createWebhook(account.id, { url: url.value.trim(), events }),
        reload,
        (created) => ({
          title: 'Webhook signing secret',
          label: 'Signing secret',
          secret: created.secret,
          note:
            'Receivers check X-Mail-Signature: sha256= HMAC-SHA256 of "{X-Mail-Timestamp}.{raw body}" keyed with this secret, ' +
            'or the Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature) with any Standard Webhooks library and this same secret.',
        }),
      );
    },
  );
}
