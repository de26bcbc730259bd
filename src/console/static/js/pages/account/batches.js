/** Batch jobs with live progress: refreshed every second while any job is pending or processing. */
import { listBatchJobs } from '../../api.js';
import { h, replaceChildren } from '../../dom.js';
import { formatTime } from '../../format.js';
import { href, navigate } from '../../router.js';
import { announceError } from '../../ui/announce.js';
import { field, select } from '../../ui/form.js';
import { pagination } from '../../ui/pagination.js';
import { section } from '../../ui/page.js';
import { pill } from '../../ui/pill.js';
import { batchProgress } from '../../ui/progress.js';
import { dataTable } from '../../ui/table.js';

const STATUSES = ['pending', 'processing', 'completed', 'failed'];
const LIMIT = 20;
const POLL_MS = 1000;

export async function render({ account, query, onCleanup }) {
  const status = STATUSES.includes(query.status) ? query.status : '';
  const page = Math.max(1, Number.parseInt(query.page, 10) || 1);
  const path = `/accounts/${account.id}/batches`;
  const list = h('div');
  let timer;
  let stopped = false;
  onCleanup(() => {
    stopped = true;
    clearTimeout(timer);
  });

  async function load() {
    const { batch_jobs: jobs, total_count: total } = await listBatchJobs(account.id, { status, page, limit: LIMIT });
    replaceChildren(list,
      dataTable({
        caption: `Batch jobs of ${account.name}`,
        empty: 'No batch jobs.',
        columns: [{ label: 'Job' }, { label: 'Status' }, { label: 'Progress' }, { label: 'Created' }, { label: 'Completed' }],
        rows: jobs.map((j) => [
          h('a', { href: href(`/accounts/${account.id}/emails`, { job_id: j.job_id }) }, h('code', {}, j.job_id)),
          pill(j.status),
          batchProgress(j),
          formatTime(j.created_at),
          formatTime(j.completed_at),
        ]),
      }),
      pagination({ page, pageSize: LIMIT, total, label: 'Batch jobs', onPage: (p) => navigate(path, { status, page: p }) }));
    return jobs.some((j) => j.status === 'pending' || j.status === 'processing');
  }

  // Polls only while something moves, one request at a time (the next waits for the last answer).
  async function poll() {
    let active = false;
    try {
      active = await load();
    } catch (err) {
      announceError(err);
    }
    if (active && !stopped) timer = setTimeout(poll, POLL_MS);
  }

  const filter = select('status', STATUSES, status, 'all');
  filter.addEventListener('change', () => navigate(path, { status: filter.value }));

  if (await load()) timer = setTimeout(poll, POLL_MS);
  return section('Batch jobs', h('div', { class: 'toolbar' }, field('Status', filter)), list);
}
