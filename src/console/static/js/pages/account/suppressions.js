/**
 * The account's suppression list: searched by address, reason, scope and topic; an address added by hand; a
 * suppression removed; a CSV file imported (its refused rows listed by line) and the whole list exported as CSV.
 * The operator acts as the account, with the rules its own API keys have (docs/suppressions.md).
 */
import {
  addSuppression,
  deleteSuppression,
  exportSuppressions,
  importSuppressions,
  listSuppressions,
} from '../../api.js';
import { h, replaceChildren, uniqueId } from '../../dom.js';
import { formatNumber, formatTime } from '../../format.js';
import { href, navigate } from '../../router.js';
import { announce, announceError } from '../../ui/announce.js';
import { confirmAction } from '../../ui/dialog.js';
import { field, oneOf, onSubmit, select } from '../../ui/form.js';
import { section } from '../../ui/page.js';
import { pill } from '../../ui/pill.js';
import { dataTable } from '../../ui/table.js';

const REASONS = ['bounce', 'complaint', 'unsubscribe', 'manual'];
const SCOPES = ['all', 'broadcast'];
const IMPORT_MAX_ROWS = 100_000;

/** What a suppression stops, in words: every email, or broadcast mail (of one topic, or of any). */
function stops(s) {
  if (s.scope === 'all') return 'All mail';
  return s.topic === null ? 'Broadcast, every topic' : 'Broadcast, one topic';
}

export async function render({ account, query }) {
  const path = `/accounts/${account.id}/suppressions`;
  const filters = {
    email: (query.email ?? '').trim(),
    reason: oneOf(REASONS, query.reason),
    scope: oneOf(SCOPES, query.scope),
    topic: (query.topic ?? '').trim(),
  };
  const searching = Object.values(filters).some((v) => v !== '');
  const list = h('div', { class: 'suppression-list' });

  async function load() {
    const { suppressions, total } = await listSuppressions(account.id, filters);
    replaceChildren(
      list,
      h(
        'p',
        { class: 'list-count', role: 'status' },
        total > suppressions.length
          ? `The ${formatNumber(suppressions.length)} newest of ${formatNumber(total)} ${searching ? 'matching ' : ''}suppressions are shown: narrow the search to see others.`
          : `${formatNumber(total)} ${total === 1 ? 'suppression' : 'suppressions'}${searching ? ' match' : ''}.`,
      ),
      dataTable({
        caption: `Suppressed addresses of ${account.name}`,
        empty: searching ? 'No suppressions match.' : 'No suppressed addresses.',
        columns: [
          { label: 'Address' },
          { label: 'Reason' },
          { label: 'Stops' },
          { label: 'Topic' },
          { label: 'Email' },
          { label: 'Since' },
          { label: h('span', { class: 'visually-hidden' }, 'Actions') },
        ],
        rows: suppressions.map((x) => [
          x.email_address,
          pill(x.reason),
          h('span', { 'data-scope': x.scope }, stops(x)),
          x.topic === null ? '—' : h('code', {}, x.topic),
          x.email_id ? h('a', { href: href(`/emails/${x.email_id}`) }, h('code', {}, x.email_id)) : '—',
          formatTime(x.created_at),
          h(
            'button',
            {
              type: 'button',
              class: 'button secondary small',
              'aria-label': `Remove ${x.email_address}${x.topic === null ? '' : ` (topic ${x.topic})`}`,
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
      message:
        item.reason === 'manual'
          ? `The address was suppressed by hand (${stops(item).toLowerCase()}${item.topic === null ? '' : `: ${item.topic}`}).`
          : `The address was suppressed after a ${item.reason}. Sending to it again can hurt the account's rates.`,
      confirmLabel: 'Remove suppression',
    });
    if (!confirmed) return;
    try {
      await deleteSuppression(item);
      announce(`${item.email_address} removed from the suppression list.`);
      await load();
    } catch (err) {
      announceError(err);
    }
  }

  await load();
  return h(
    'div',
    { class: 'stack' },
    section('Suppressions', searchForm(path, filters), list),
    section('Add a suppression', addForm(account, load)),
    section('Import and export', importForm(account, load), exportButton(account)),
  );
}

/** The search: its values are the URL's, so a reload or a shared link shows the same list. */
function searchForm(path, filters) {
  const email = h('input', {
    name: 'email',
    value: filters.email,
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: 'user@example.com or a part',
  });
  const reason = select('reason', REASONS, filters.reason, 'any');
  const scope = select('scope', SCOPES, filters.scope, 'any');
  const topic = h('input', { name: 'topic', value: filters.topic, autocomplete: 'off', spellcheck: 'false' });
  return onSubmit(
    h(
      'form',
      { class: 'toolbar', role: 'search', 'aria-label': 'Search suppressions' },
      field('Address', email),
      field('Reason', reason),
      field('Scope', scope),
      field('Topic', topic),
      h('button', { type: 'submit', class: 'button secondary' }, 'Search'),
      h('a', { class: 'button ghost', href: href(path) }, 'Clear'),
    ),
    () =>
      navigate(path, {
        email: email.value.trim(),
        reason: reason.value,
        scope: scope.value,
        topic: topic.value.trim(),
      }),
  );
}

function addForm(account, reload) {
  const email = h('input', {
    name: 'email',
    required: true,
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: 'user@example.com',
  });
  const scope = select('scope', SCOPES, 'all');
  const topic = h('input', { name: 'topic', autocomplete: 'off', spellcheck: 'false' });
  const topicField = field(
    'Topic (optional)',
    topic,
    'Only with scope broadcast: that topic alone; empty: every topic.',
  );
  // A topic is only for broadcast suppressions: the box is off while the scope is all.
  const syncTopic = () => {
    topic.disabled = scope.value !== 'broadcast';
    if (topic.disabled) topic.value = '';
  };
  scope.addEventListener('change', syncTopic);
  syncTopic();
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true });

  return onSubmit(
    h(
      'form',
      { class: 'inline-form', 'aria-label': 'Add a suppression' },
      field('Address', email, 'One bare address; it gets reason manual.'),
      field('Scope', scope, 'all: every email; broadcast: broadcast mail only.'),
      topicField,
      h('button', { type: 'submit', class: 'button primary' }, 'Add suppression'),
      error,
    ),
    async () => {
      error.hidden = true;
      email.removeAttribute('aria-invalid');
      try {
        const added = await addSuppression(account.id, {
          email: email.value.trim(),
          scope: scope.value,
          ...(topic.value.trim() === '' ? {} : { topic: topic.value.trim() }),
        });
        email.value = '';
        announce(
          added.reason === 'manual'
            ? `${added.email_address} suppressed (${stops(added).toLowerCase()}${added.topic === null ? '' : `: ${added.topic}`}).`
            : `${added.email_address} was already suppressed (${added.reason}).`,
        );
        await reload();
      } catch (err) {
        // Shown beside the form as well as announced: the API's message names what to correct.
        error.textContent = err.message;
        error.hidden = false;
        email.setAttribute('aria-invalid', 'true');
        announceError(err);
      }
    },
  );
}

/** A CSV file posted as it is; the answer's counts and each refused row by its line in the file. */
function importForm(account, reload) {
  const file = h('input', { type: 'file', name: 'file', accept: '.csv,text/csv', required: true });
  const result = h('div', { class: 'import-result', 'aria-live': 'polite' });
  const headingId = uniqueId('import-title');

  return h(
    'div',
    { class: 'import-export' },
    h('h3', { id: headingId, class: 'subhead' }, 'Import a CSV file'),
    onSubmit(
      h(
        'form',
        { class: 'inline-form', 'aria-labelledby': headingId },
        field(
          'CSV file',
          file,
          `Header email[,scope[,topic]], then one address a row; up to ${formatNumber(IMPORT_MAX_ROWS)} rows, each with reason manual.`,
        ),
        h('button', { type: 'submit', class: 'button primary' }, 'Import'),
      ),
      async () => {
        const chosen = file.files?.[0];
        if (!chosen) return;
        replaceChildren(result, h('p', { class: 'loading' }, `Importing ${chosen.name}…`));
        try {
          const answer = await importSuppressions(account.id, await chosen.text());
          replaceChildren(result, importSummary(chosen.name, answer));
          file.value = '';
          announce(
            `Imported ${answer.imported}, skipped ${answer.skipped}, ${answer.errors.length} ${answer.errors.length === 1 ? 'row' : 'rows'} refused.`,
            answer.errors.length ? 'error' : 'info',
          );
          await reload();
        } catch (err) {
          replaceChildren(result, h('p', { class: 'form-error', role: 'alert' }, err.message));
          announceError(err);
        }
      },
    ),
    result,
  );
}

function importSummary(name, { imported, skipped, errors }) {
  return [
    h(
      'dl',
      { class: 'facts import-counts', 'aria-label': `Import of ${name}` },
      h('div', { class: 'fact' }, h('dt', {}, 'Imported'), h('dd', { class: 'imported' }, formatNumber(imported))),
      h(
        'div',
        { class: 'fact' },
        h('dt', {}, 'Skipped (already suppressed)'),
        h('dd', { class: 'skipped' }, formatNumber(skipped)),
      ),
      h(
        'div',
        { class: 'fact' },
        h('dt', {}, 'Rows refused'),
        h('dd', { class: 'refused' }, formatNumber(errors.length)),
      ),
    ),
    errors.length
      ? dataTable({
          caption: `Rows of ${name} not imported, by line (the header is line 1)`,
          showCaption: true,
          empty: '',
          columns: [{ label: 'Line', numeric: true }, { label: 'Why' }],
          rows: errors.map((e) => [String(e.line), e.message]),
        })
      : null,
  ];
}

/** The export is a download: fetched with the admin token (a plain link could not send it), then saved. */
function exportButton(account) {
  return h(
    'div',
    { class: 'import-export' },
    h('h3', { class: 'subhead' }, 'Export'),
    h(
      'p',
      { class: 'hint' },
      'Every suppression of the account as CSV (email, reason, scope, topic, created_at), oldest first.',
    ),
    h(
      'button',
      {
        type: 'button',
        class: 'button secondary',
        onclick: async (event) => {
          const button = event.currentTarget;
          button.disabled = true;
          try {
            const csv = await exportSuppressions(account.id);
            const url = window.URL.createObjectURL(new window.Blob([csv], { type: 'text/csv' }));
            const link = h('a', { href: url, download: `suppressions-${account.id}.csv`, hidden: true });
            document.body.append(link);
            link.click();
            link.remove();
            // After the click has started the download.
            setTimeout(() => window.URL.revokeObjectURL(url), 0);
            announce('Suppressions exported.');
          } catch (err) {
            announceError(err);
          } finally {
            button.disabled = false;
          }
        },
      },
      'Download CSV',
    ),
  );
}
