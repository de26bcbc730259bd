/** An account's templates, newest first: each links to its editor; a new one starts from an empty editor. */
import { deleteTemplate, listTemplates } from '../../api.js';
import { h } from '../../dom.js';
import { formatTime } from '../../format.js';
import { href, navigate } from '../../router.js';
import { announce, announceError } from '../../ui/announce.js';
import { confirmAction } from '../../ui/dialog.js';
import { pageOf, pagedTable } from '../../ui/pagination.js';
import { section } from '../../ui/page.js';

const PAGE_SIZE = 20;

export async function render({ account, query, refresh }) {
  const page = pageOf(query);
  const { templates, total } = await listTemplates(account.id, { page, page_size: PAGE_SIZE });
  const path = `/accounts/${account.id}/templates`;

  async function remove(template) {
    if (!(await confirmTemplateDeletion(template))) return;
    try {
      await deleteTemplate(account.id, template.id);
      announce(`Template ${template.name} deleted.`);
      await refresh();
    } catch (err) {
      announceError(err);
    }
  }

  return section(
    'Templates',
    h('div', { class: 'toolbar' }, h('a', { class: 'button primary', href: href(`${path}/new`) }, 'New template')),
    pagedTable(
      {
        caption: `Templates of ${account.name}`,
        empty: 'No templates yet.',
        columns: [
          { label: 'Name' },
          { label: 'Alias' },
          { label: 'Subject' },
          { label: 'Latest version', numeric: true },
          { label: 'Published version', numeric: true },
          { label: 'Updated' },
          { label: h('span', { class: 'visually-hidden' }, 'Actions') },
        ],
        rows: templates.map((t) => [
          h('span', {}, h('a', { href: href(`${path}/${t.id}`) }, t.name), h('span', { class: 'sub' }, t.id)),
          t.alias ? h('code', {}, t.alias) : '—',
          t.subject,
          String(t.version),
          String(t.published_version),
          formatTime(t.updated_at),
          h(
            'button',
            {
              type: 'button',
              class: 'button danger small',
              'aria-label': `Delete template ${t.name}`,
              onclick: () => remove(t),
            },
            'Delete',
          ),
        ]),
      },
      { page, pageSize: PAGE_SIZE, total, label: 'Templates', onPage: (p) => navigate(path, { page: p }) },
    ),
  );
}

/** The question before a template goes: sends naming it fail from then on. */
export function confirmTemplateDeletion(template) {
  return confirmAction({
    title: `Delete the template ${template.name}?`,
    message: `Sends naming ${template.alias ?? template.id} are refused from then on. This cannot be undone.`,
    confirmLabel: 'Delete template',
  });
}
