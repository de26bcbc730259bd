/**
 * API keys: create (the key is shown once), with the key's own rate limit, daily quota and expiry if wanted; each
 * key's limits, expiry and usage (sent today against its own quota, last use); delete.
 */
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

/** A key's expiry: when, and whether it has come (the key is then refused). */
function expiry(k) {
  if (!k.expires_at) return h('span', { class: 'sub' }, 'never');
  const expired = new Date(k.expires_at).getTime() <= Date.now();
  return h('span', {}, formatTime(k.expires_at), expired ? [' ', h('span', { class: 'pill bad' }, 'expired')] : null);
}

/** Emails sent today against the key's own quota; a key without one is counted only with the account. */
function quota(k) {
  if (k.daily_quota === undefined) return h('span', { class: 'sub' }, "account's");
  return `${formatNumber(k.usage?.sent_today ?? 0)} / ${formatNumber(k.daily_quota)} today`;
}

export async function render({ account }) {
  const list = h('div');

  async function load() {
    const { api_keys: keys, total } = await listApiKeys(account.id);
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
          { label: 'Rate limit' },
          { label: 'Daily quota' },
          { label: 'Expires' },
          { label: 'Last used' },
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
          k.rate_limit === undefined ? h('span', { class: 'sub' }, "service's") : `${formatNumber(k.rate_limit)}/s`,
          quota(k),
          expiry(k),
          k.last_used_at ? formatTime(k.last_used_at) : h('span', { class: 'sub' }, 'never'),
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
      total > keys.length ? h('p', { class: 'sub' }, `The first ${keys.length} of ${total} keys.`) : null,
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
  // The key's own limits, each optional: empty is the account's (and the service's rate).
  const rateLimit = h('input', { name: 'rate_limit', type: 'number', min: '1', step: '1', inputmode: 'numeric' });
  const dailyQuota = h('input', {
    name: 'daily_quota',
    type: 'number',
    min: '0',
    max: account.daily_quota,
    step: '1',
    inputmode: 'numeric',
  });
  const expiresAt = h('input', { name: 'expires_at', type: 'datetime-local' });
  const form = onSubmit(
    h(
      'form',
      { class: 'grid-form' },
      field('Name', name),
      field('Permission', permission, 'read_only: queries; send_only: sending and queries; all: also cancelling.'),
      field('Allowed sender domains', domains, 'Comma-separated; empty allows every verified domain of the account.'),
      field('Rate limit (requests per second)', rateLimit, "Optional; empty: the service's limit, the most it may be."),
      field(
        'Daily quota (emails per UTC day)',
        dailyQuota,
        `Optional; at most the account's daily quota${account.daily_quota === undefined ? '' : ` (${formatNumber(account.daily_quota)})`}; empty: the account's quota alone.`,
      ),
      field('Expires', expiresAt, 'Optional, in your time zone; from then on the key is refused. Empty: never.'),
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
        ...(rateLimit.value !== '' ? { rate_limit: Number(rateLimit.value) } : {}),
        ...(dailyQuota.value !== '' ? { daily_quota: Number(dailyQuota.value) } : {}),
        // datetime-local is the browser's local time without a zone: sent as the instant it names.
        ...(expiresAt.value !== '' ? { expires_at: new Date(expiresAt.value).toISOString() } : {}),
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
