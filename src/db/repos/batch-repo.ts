import type { BatchStatus } from '../../domain/catalog.js';
import type { Sql } from '../sql.js';
import { ownedRows } from './owned-rows.js';
import { attachmentRows, emailRows, idempotencyCte } from './emails-repo.js';
import type { IdempotencyCompletion, NewEmail } from '../../domain/entities/emails.js';
import type { BatchRow } from '../../domain/entities/batches.js';

type Raw = {
  id: string;
  account_id: string;
  status: BatchStatus;
  total_count: number;
  sent_count: number;
  failed_count: number;
  created_at: Date;
  completed_at: Date | null;
};
const COLUMNS = 'id, account_id, status, total_count, sent_count, failed_count, created_at, completed_at';
const toBatch = (r: Raw): BatchRow => ({
  id: r.id,
  accountId: r.account_id,
  status: r.status,
  totalCount: r.total_count,
  sentCount: r.sent_count,
  failedCount: r.failed_count,
  createdAt: r.created_at,
  completedAt: r.completed_at,
});

export function createBatchRepo(sql: Sql) {
  return {
    /** The job, every email of it (with attachments) and the Idempotency-Key's answer, in one statement. */
    async create(job: {
      id: string;
      accountId: string;
      apiKeyId: string;
      emails: NewEmail[];
      idempotency?: IdempotencyCompletion;
    }): Promise<void> {
      const files = attachmentRows(job.emails);
      const idem = job.idempotency;
      // Each `name as (insert into ... ${helper}` stays on one line: see emails-repo's note on helpers.
      await sql`
        with inserted as (insert into emails ${sql(emailRows(sql, job.emails) as never)} returning id),
        job as (insert into batch_jobs (id, account_id, api_key_id, total_count)
          values (${job.id}, ${job.accountId}, ${job.apiKeyId}, ${job.emails.length}) returning id)
        ${files.length > 0 ? sql`, files as (insert into attachments ${sql(files as never)})` : sql``}
        ${idempotencyCte(sql, idem)}
        select (select count(*) from inserted) as n, (select id from job) as id`;
    },

    async markWorkflowStarted(id: string): Promise<void> {
      await sql`update batch_jobs set workflow_started = true where id = ${id}`;
    },

    async unstarted(olderThanSeconds: number, limit: number): Promise<string[]> {
      const rows = await sql<{ id: string }[]>`
        select id from batch_jobs where not workflow_started and created_at < now() - make_interval(secs => ${olderThanSeconds})
        order by created_at limit ${limit}`;
      return rows.map((r) => r.id);
    },

    ...ownedRows<Raw, BatchRow, BatchStatus>(sql, 'batch_jobs', 'batch', COLUMNS, toBatch),

    /** The job starts processing; answers the ids of its emails not yet delivered or refused. */
    async begin(id: string): Promise<string[]> {
      await sql`update batch_jobs set status = 'processing', started_at = coalesce(started_at, now()) where id = ${id} and status = 'pending'`;
      const rows = await sql<{ id: string }[]>`
        select e.id from emails e join batch_jobs b on b.id = e.job_id and b.account_id = e.account_id
        where b.id = ${id} and e.job_type = 'batch' and e.status = 'pending' order by e.id`;
      return rows.map((r) => r.id);
    },

    /** Every email reached a final outcome: `completed` if at least one was sent, else `failed`. */
    async finish(id: string): Promise<BatchStatus | undefined> {
      const [row] = await sql<{ status: BatchStatus }[]>`
        update batch_jobs set
          status = case when sent_count > 0 then 'completed' else 'failed' end,
          completed_at = now()
        where id = ${id} and status in ('pending', 'processing') and sent_count + failed_count >= total_count
        returning status`;
      return row?.status;
    },
  };
}
export type BatchRepo = ReturnType<typeof createBatchRepo>;
