/** API keys: create (the key is shown once), usage per key, delete. */
import { createApiKey, deleteApiKey, listApiKeys } from '../../api.js';
import { publicUrl } from '../../config.js';
import { h, replaceChildren } from '../../dom.js';
import { formatNumber, formatRate, formatTime } from '../../format.js';
import { announce, announceError } from '../../ui/announce.js';
import { confirmAction } from '../../ui/dialog.js';
import { field, onSubmit, select } from '../../ui/form.js';
import { section } from '../../ui/page.js';
import { createThenShowSecret } from '../../ui/secret-dialog.js';
import { dataTable } from '../../ui/table.js';

const PERMISSIONS = ['all', 'send_only', 'read_only'];

export async function render({ account }) {
  const list = h('div');

  async function load() {
    const { api_keys: keys } = await listApiKeys(account.id);
    replaceChildren(
      list,
      dataTable({
        caption: `API keys of ${account.name}`,
        empty: 'No API keys yet.',
        columns: [
          { label: 'Name' },
          { label: 'Permission' },
          { label: 'Allowed domains' },
          { label: 'Requests', numeric: true },
          { label: 'Emails sent', numeric: true },
          { label: 'Error rate', numeric: true },
          { label: 'Created' },
          { label: h('span', { class: 'visually-hidden' }, 'Actions') },
        ],
        rows: keys.map((k) => [
          h('span', {}, k.name, h('span', { class: 'sub' }, k.id)),
          h('code', {}, k.permission),
          k.allowed_domains.length ? k.allowed_domains.join(', ') : h('span', { class: 'sub' }, 'any verified domain'),
          formatNumber(k.usage?.request_count),
          formatNumber(k.usage?.email_sent_count),
          formatRate(k.usage?.error_rate),
          formatTime(k.created_at),
          h(
            'button',
            {
              type: 'button',
              class: 'button danger small',
              'aria-label': `Delete key ${k.name}`,
              onclick: () => remove(k),
            },
            'Delete',
          ),
        ]),
      }),
    );
  }

  async function remove(key) {
    const confirmed = await confirmAction({
      title: `Delete the key ${key.name}?`,
      message: 'Every request with this key fails with 401 from the next one on. This cannot be undone.',
      confirmLabel: 'Delete key',
    });
    if (!confirmed) return;
    try {
      await deleteApiKey(key.id);
      announce(`Key ${key.name} deleted.`);
      await load();
    } catch (err) {
      announceError(err);
    }
  }

  const name = h('input', { name: 'name', required: true, autocomplete: 'off', placeholder: 'production server' });
  const permission = select('permission', PERMISSIONS, 'send_only');
  const domains = h('input', {
    name: 'allowed_domains',
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: 'example.com, mail.example.com',
  });
  const form = onSubmit(
    h(
      'form',
      { class: 'grid-form' },
      field('Name', name),
      field('Permission', permission, 'read_only: queries; send_only: sending and queries; all: also cancelling.'),
      field('Allowed sender domains', domains, 'Comma-separated; empty allows every verified domain of the account.'),
      h('div', { class: 'form-actions' }, h('button', { type: 'submit', class: 'button primary' }, 'Create key')),
    ),
    async (f) => {
      const allowed = domains.value
        .split(',')
        .map((d) => d.trim())
        .filter(Boolean);
      const body = {
        name: name.value.trim(),
        permission: permission.value,
        ...(allowed.length ? { allowed_domains: allowed } : {}),
      };
      await createThenShowSecret(
        f,
        () => createApiKey(account.id, body),
        load,
        (created) => ({
          title: `API key ${created.name}`,
          label: 'API key',
          secret: created.key,
          note: 'Send with it as a bearer token:',
          example: `curl ${publicUrl}/v1/mail/emails \\\n  -H "Authorization: Bearer ${created.key}" \\\n  -H "Content-Type: application/json" \\\n  -d '{"from":"you@your-domain","to":["someone@example.net"],"subject":"Hello","text":"It works."}'`,
        }),
      );
    },
  );

  await load();
  return h('div', { class: 'stack' }, section('New API key', form), section('Keys', list));
}
