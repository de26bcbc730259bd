/** Batch jobs with live progress: refreshed every second while any job is pending or processing. */
import { listBatchJobs } from '../../api.js';
import { h, replaceChildren } from '../../dom.js';
import { formatTime } from '../../format.js';
import { href, navigate } from '../../router.js';
import { announceError } from '../../ui/announce.js';
import { oneOf, statusFilter } from '../../ui/form.js';
import { pagedTable, pageOf } from '../../ui/pagination.js';
import { section } from '../../ui/page.js';
import { pill } from '../../ui/pill.js';
import { batchProgress } from '../../ui/progress.js';

const STATUSES = ['pending', 'processing', 'completed', 'failed'];
const LIMIT = 20;
const POLL_MS = 1000;

export async function render({ account, query, onCleanup }) {
  const status = oneOf(STATUSES, query.status);
  const page = pageOf(query);
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
    replaceChildren(
      list,
      pagedTable(
        {
          caption: `Batch jobs of ${account.name}`,
          empty: 'No batch jobs.',
          columns: [
            { label: 'Job' },
            { label: 'Status' },
            { label: 'Progress' },
            { label: 'Created' },
            { label: 'Completed' },
          ],
          rows: jobs.map((j) => [
            h('a', { href: href(`/accounts/${account.id}/emails`, { job_id: j.job_id }) }, h('code', {}, j.job_id)),
            pill(j.status),
            batchProgress(j),
            formatTime(j.created_at),
            formatTime(j.completed_at),
          ]),
        },
        { page, pageSize: LIMIT, total, label: 'Batch jobs', onPage: (p) => navigate(path, { status, page: p }) },
      ),
    );
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

  if (await load()) timer = setTimeout(poll, POLL_MS);
  return section(
    'Batch jobs',
    h(
      'div',
      { class: 'toolbar' },
      statusFilter(STATUSES, status, (s) => navigate(path, { status: s })),
    ),
    list,
  );
}
