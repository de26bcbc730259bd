import type postgres from 'postgres';
import { percentiles } from '../lib/load.js';
import type { ServiceHandle } from '../lib/service.js';

/**
 * The lists' latency through the service's REST API: each query asked `requests` times one at a time (after
 * 3 unmeasured), p50/p99 of the whole request as the client sees it; and the `total` it answered checked
 * once against count(*) of the same rows in the database.
 */

export interface ListQuery {
  /** The figure's name: list, filter, page. */
  name: string;
  /** Path under /v1/mail, with its query string. */
  path: string;
  admin: boolean;
  page: 1 | 1000;
  /** The rows the total counts, for the exactness check. */
  countSql: string;
  /** The answer's total field. */
  totalField: 'total' | 'total_count';
}

export interface ListFigure {
  name: string;
  page: number;
  p50: number;
  p99: number;
  max: number;
  total: number;
  /** count(*) of the same rows: equal to total, or the figure says so. */
  counted: number;
  failures: number;
  lastError?: string;
}

const EMAIL_STATUSES = ['pending', 'sent', 'delivered', 'bounced', 'complained'];
const JOB_TYPES = ['direct', 'batch', 'scheduled'];

/** The big account's queries: every filter of GET /emails (and their pairs), the other lists, page 1 and page 1,000. */
export function listQueries(account: string, sample: { batchJob: string; scheduled: string }): ListQuery[] {
  const q: ListQuery[] = [];
  const emails = (filter: Record<string, string>, page: 1 | 1000, admin = false) => {
    const params = new URLSearchParams({ ...filter, ...(page > 1 ? { page: String(page) } : {}) });
    const where = Object.entries(filter)
      .map(([k, v]) => `and ${k} = '${v}'`)
      .join(' ');
    q.push({
      name: `${admin ? 'admin ' : ''}emails ${
        Object.entries(filter)
          .map(([k, v]) => `${k}=${v}`)
          .join('&') || '(no filter)'
      } page ${page}`,
      path: `${admin ? `/admin/accounts/${account}/emails` : '/emails'}?${params}`,
      admin,
      page,
      countSql: `select count(*)::int as n from emails where account_id = '${account}' ${where}`,
      totalField: 'total',
    });
  };
  emails({}, 1);
  for (const status of EMAIL_STATUSES) emails({ status }, 1);
  for (const jobType of JOB_TYPES) emails({ job_type: jobType }, 1);
  for (const status of EMAIL_STATUSES) for (const jobType of JOB_TYPES) emails({ status, job_type: jobType }, 1);
  emails({ job_id: sample.batchJob }, 1);
  emails({ job_id: sample.batchJob, status: 'delivered' }, 1);
  emails({ job_id: sample.scheduled, job_type: 'scheduled' }, 1);
  emails({}, 1000);
  emails({ status: 'delivered' }, 1000);
  emails({ job_type: 'direct' }, 1000);
  emails({ job_type: 'batch' }, 1000);
  emails({ status: 'delivered', job_type: 'batch' }, 1000);
  emails({}, 1, true);
  emails({ status: 'bounced', job_type: 'direct' }, 1, true);
  emails({}, 1000, true);

  const owned = (list: 'scheduled' | 'batch', status: string, dbStatus: string, page: 1 | 1000, admin = false) => {
    const table = list === 'scheduled' ? 'scheduled_emails' : 'batch_jobs';
    const params = new URLSearchParams({ ...(status ? { status } : {}), ...(page > 1 ? { page: String(page) } : {}) });
    const base = admin
      ? `/admin/accounts/${account}/${list === 'scheduled' ? 'scheduled' : 'batches'}`
      : `/emails/${list}`;
    q.push({
      name: `${admin ? 'admin ' : ''}${list} ${status ? `status=${status}` : '(no filter)'} page ${page}`,
      path: `${base}?${params}`,
      admin,
      page,
      totalField: 'total_count',
      countSql: `select count(*)::int as n from ${table} where account_id = '${account}' ${dbStatus ? `and status = '${dbStatus}'` : ''}`,
    });
  };
  for (const [s, db] of [
    ['', ''],
    ['scheduled', 'enqueued'],
    ['sent', 'sent'],
    ['cancelled', 'cancelled'],
  ])
    owned('scheduled', s!, db!, 1);
  owned('scheduled', '', '', 1000);
  owned('scheduled', 'sent', 'sent', 1000);
  for (const s of ['', 'completed', 'failed', 'processing']) owned('batch', s, s, 1);
  owned('batch', '', '', 1000);
  owned('batch', 'completed', 'completed', 1000);
  owned('scheduled', '', '', 1, true);
  owned('batch', '', '', 1000, true);
  return q;
}

async function get(
  service: ServiceHandle,
  query: ListQuery,
): Promise<{ ms: number; status: number; total?: number; error?: string }> {
  const token = query.admin ? service.adminToken : service.apiKey;
  const t0 = performance.now();
  const res = await fetch(`${service.baseUrl}/v1/mail${query.path}`, { headers: { authorization: `Bearer ${token}` } });
  const text = await res.text();
  const ms = performance.now() - t0;
  if (!res.ok) return { ms, status: res.status, error: text.slice(0, 200) };
  return { ms, status: res.status, total: (JSON.parse(text) as Record<string, number>)[query.totalField] };
}

export async function measureList(
  service: ServiceHandle,
  sql: postgres.Sql,
  query: ListQuery,
  requests: number,
): Promise<ListFigure> {
  for (let i = 0; i < 3; i += 1) await get(service, query);
  const times: number[] = [];
  let failures = 0;
  let lastError: string | undefined;
  let total = NaN;
  for (let i = 0; i < requests; i += 1) {
    const r = await get(service, query);
    if (r.status !== 200) {
      failures += 1;
      lastError = `${r.status} ${r.error ?? ''}`;
      continue;
    }
    times.push(r.ms);
    total = r.total ?? NaN;
  }
  const [count] = await sql.unsafe<{ n: number }[]>(query.countSql);
  const p = percentiles(times);
  return {
    name: query.name,
    page: query.page,
    p50: p.p50,
    p99: p.p99,
    max: p.max,
    total,
    counted: count!.n,
    failures,
    ...(lastError ? { lastError } : {}),
  };
}
