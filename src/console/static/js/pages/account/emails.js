/** An account's emails with the spec's filters (status, job type, job id) and pagination. */
import { listEmails } from '../../api.js';
import { h } from '../../dom.js';
import { formatAddresses, formatTime } from '../../format.js';
import { href, navigate } from '../../router.js';
import { field, oneOf, onSubmit, select } from '../../ui/form.js';
import { pageOf, pagination } from '../../ui/pagination.js';
import { section } from '../../ui/page.js';
import { pill } from '../../ui/pill.js';
import { dataTable } from '../../ui/table.js';

const EMAIL_STATUSES = ['pending', 'sent', 'delivered', 'bounced', 'complained'];
const JOB_TYPES = ['direct', 'scheduled', 'batch'];
const PAGE_SIZE = 20;

export async function render({ account, query }) {
  const filters = {
    status: oneOf(EMAIL_STATUSES, query.status),
    job_type: oneOf(JOB_TYPES, query.job_type),
    job_id: query.job_id ?? '',
  };
  const page = pageOf(query);
  const { data, total } = await listEmails(account.id, { ...filters, page, page_size: PAGE_SIZE });
  const path = `/accounts/${account.id}/emails`;

  const status = select('status', EMAIL_STATUSES, filters.status, 'any');
  const jobType = select('job_type', JOB_TYPES, filters.job_type, 'any');
  const jobId = h('input', {
    name: 'job_id',
    value: filters.job_id,
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: 'bat_… or sch_…',
  });
  const form = onSubmit(
    h(
      'form',
      { class: 'toolbar', role: 'search', 'aria-label': 'Filter emails' },
      field('Status', status),
      field('Job type', jobType),
      field('Job id', jobId),
      h('button', { type: 'submit', class: 'button secondary' }, 'Filter'),
      h('a', { class: 'button ghost', href: href(path) }, 'Clear'),
    ),
    () => {
      navigate(path, { status: status.value, job_type: jobType.value, job_id: jobId.value.trim() });
    },
  );

  return section(
    'Emails',
    form,
    dataTable({
      caption: `Emails of ${account.name}`,
      empty: 'No emails match.',
      columns: [{ label: 'Subject' }, { label: 'From' }, { label: 'To' }, { label: 'Status' }, { label: 'Created' }],
      rows: data.map((e) => [
        h('a', { href: href(`/emails/${e.id}`) }, e.subject || '(no subject)', h('span', { class: 'sub' }, e.id)),
        e.from,
        formatAddresses(e.to),
        pill(e.status),
        formatTime(e.created_at),
      ]),
    }),
    pagination({
      page,
      pageSize: PAGE_SIZE,
      total,
      label: 'Emails',
      onPage: (p) => navigate(path, { ...filters, page: p }),
    }),
  );
}
