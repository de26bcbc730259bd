import postgres from 'postgres';
import { measuring, partContext, type BenchContext, type PartResult } from '../lib/context.js';
import { seedLists, type SeedResult } from '../lib/lists-seed.js';
import { startService } from '../lib/service.js';
import { listQueries, measureList, type ListFigure } from './list-latency.js';

/**
 * Lists at scale (issue 12): BENCH_LISTS_EMAILS emails (10,000,000) in the service's database, a tenth of
 * them in the service's own account, with its scheduled emails and batch jobs; then the latency of every
 * list and filter through the REST API, page 1 and page 1,000, and the storage the emails take.
 */
export interface ListsFigures {
  emails: number;
  seed: SeedResult;
  figures: ListFigure[];
  /** Bytes per 1,000,000 emails: the emails table with its indexes and TOAST, and list_counts. */
  storage: {
    emailsPerMillion: number;
    heapPerMillion: number;
    indexesPerMillion: number;
    countersBytes: number;
    statusJobTypeIndexPerMillion: number;
  };
}

const MB = 1e6;

async function storage(sql: postgres.Sql, emails: number): Promise<ListsFigures['storage']> {
  const [s] = await sql<{ total: number; heap: number; indexes: number; counters: number; added: number }[]>`
    select pg_total_relation_size('emails')::float8 as total, pg_table_size('emails')::float8 as heap,
      pg_indexes_size('emails')::float8 as indexes, pg_total_relation_size('list_counts')::float8 as counters,
      pg_relation_size('emails_account_status_job_type')::float8 as added`;
  const per = (bytes: number) => Math.round(bytes / (emails / 1e6));
  return {
    emailsPerMillion: per(s!.total),
    heapPerMillion: per(s!.heap),
    indexesPerMillion: per(s!.indexes),
    countersBytes: s!.counters,
    statusJobTypeIndexPerMillion: per(s!.added),
  };
}

export async function lists(bench: BenchContext): Promise<PartResult<ListsFigures>> {
  const ctx = partContext(bench);
  const { infra, sizes } = ctx;
  await infra.createDatabase('bench_lists');
  const env = infra.serviceEnv('bench_lists', 'service-lists');
  const service = await startService(env, { name: 'service (lists)' });
  const sql = postgres(env.DATABASE_URL!, { max: 3, onnotice: () => {} });
  try {
    return await measuring(ctx, service, async () => {
      ctx.log(`lists: seeding ${sizes.listsEmails.toLocaleString('en')} emails, a tenth in ${service.accountId}`);
      const t0 = performance.now();
      const seed = await seedLists(sql, { emails: sizes.listsEmails, bigAccount: service.accountId }, ctx.log);
      const seedS = Math.round((performance.now() - t0) / 1000);
      ctx.addRow({
        key: 'lists-seed',
        what: `lists: seeding ${sizes.listsEmails.toLocaleString('en')} emails (generate_series, 2 sessions)`,
        value: seedS,
        unit: 's',
        notes: [
          `rows ${seed.insertS} s, indexes of emails ${seed.indexS} s, VACUUM ANALYZE ${seed.vacuumS} s; ` +
            `big account: ${seed.bigEmails.toLocaleString('en')} emails, ${seed.scheduled.toLocaleString('en')} scheduled emails, ${seed.batchJobs.toLocaleString('en')} batch jobs`,
        ],
      });
      const [batchJob] = await sql<
        { id: string }[]
      >`select id from batch_jobs where account_id = ${service.accountId} order by id desc offset 10 limit 1`;
      const [scheduled] = await sql<
        { id: string }[]
      >`select id from scheduled_emails where account_id = ${service.accountId} and status = 'sent' order by id desc limit 1`;
      const figures: ListFigure[] = [];
      for (const query of listQueries(service.accountId, { batchJob: batchJob!.id, scheduled: scheduled!.id })) {
        const f = await measureList(service, sql, query, sizes.listsRequests);
        figures.push(f);
        const notes = [
          `${sizes.listsRequests} requests one at a time; total ${f.total.toLocaleString('en')}${f.total === f.counted ? ' (= count(*))' : `, count(*) ${f.counted}: NOT EXACT`}`,
        ];
        if (f.failures > 0) notes.push(`${f.failures} failed: ${f.lastError}`);
        ctx.addRow({
          key: `lists ${f.name}`,
          what: `lists: ${f.name}`,
          value: f.p99,
          unit: 'ms p99',
          p50: f.p50,
          p99: f.p99,
          notes,
        });
      }
      const st = await storage(sql, sizes.listsEmails);
      ctx.addRow({
        key: 'lists-storage',
        what: 'lists: emails table per 1,000,000 emails (heap + TOAST + indexes)',
        value: Math.round(st.emailsPerMillion / MB),
        unit: 'MB',
        notes: [
          `heap ${Math.round(st.heapPerMillion / MB)} MB, indexes ${Math.round(st.indexesPerMillion / MB)} MB ` +
            `(of which emails_account_status_job_type, added by migration 0014: ${Math.round(st.statusJobTypeIndexPerMillion / MB)} MB); ` +
            `list_counts: ${Math.round(st.countersBytes / 1024)} KiB in all`,
        ],
      });
      return { rows: ctx.rows, figures: { emails: sizes.listsEmails, seed, figures, storage: st } };
    });
  } finally {
    await sql.end();
  }
}
