import crypto from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { MIGRATIONS } from '../../src/db/migrations/index.js';
import { createEmailsRepo } from '../../src/db/index.js';
import type { EmailFilter } from '../../src/domain/entities/emails.js';
import { createBatchRepo } from '../../src/db/index.js';
import { createScheduledRepo } from '../../src/db/index.js';
import type { Sql } from '../../src/db/sql.js';
import { createTestDatabase } from '../helpers/stack.js';

/**
 * The list totals come from counters that migration 0014's triggers keep (issue 12): they must equal
 * count(*) after any mix of concurrent inserts, status changes, deletes and rolled-back transactions, and
 * the lists must answer the same pages and totals as plain queries.
 */

const STATUSES = ['pending', 'sent', 'delivered', 'bounced', 'complained'] as const;
const JOB_TYPES = ['direct', 'batch', 'scheduled'] as const;
const ACCOUNTS = ['acc_a', 'acc_b', 'acc_c'];

let sql: postgres.Sql;
beforeAll(async () => {
  sql = postgres(await createTestDatabase(), { max: 12, onnotice: () => {} });
  for (const id of ACCOUNTS) await sql`insert into accounts (id, name) values (${id}, ${id})`;
});
afterAll(async () => {
  await sql.end();
});

const pick = <T>(list: readonly T[]): T => list[crypto.randomInt(list.length)]!;
let seq = 0;
const nextId = (prefix: string) =>
  `${prefix}_${String(++seq).padStart(12, '0')}_${crypto.randomBytes(3).toString('hex')}`;

const emailValues = (n: number, account = pick(ACCOUNTS)) =>
  Array.from({ length: n }, () => ({
    id: nextId('em'),
    account_id: account,
    job_type: pick(JOB_TYPES),
    from_address: 'a@example.com',
    to_addresses: ['b@example.net'],
    subject: 's',
    size_bytes: 1,
    header_message_id: 'h',
    mailboxes: sql.json({}),
    sender_domain: 'example.com',
  }));

/** Counters against count(*), per account, list, status and job type: the rows that differ. */
async function mismatches(db: postgres.Sql) {
  return db`
    with counted as (
      select account_id, list, status, job_type, sum(n) as n from list_counts group by 1, 2, 3, 4),
    actual as (
      select account_id, 'emails' as list, status, job_type, count(*) as n from emails group by 1, 3, 4
      union all select account_id, 'scheduled', status, '', count(*) from scheduled_emails group by 1, 3
      union all select account_id, 'batch', status, '', count(*) from batch_jobs group by 1, 3)
    select coalesce(c.account_id, a.account_id) as account_id, coalesce(c.list, a.list) as list,
      coalesce(c.status, a.status) as status, coalesce(c.job_type, a.job_type) as job_type, c.n as counted, a.n as actual
    from counted c full join actual a using (account_id, list, status, job_type)
    where coalesce(c.n, 0) <> coalesce(a.n, 0)`;
}

/** One random write, as the service's statements make them (or a transaction rolled back). */
async function randomWrite(): Promise<void> {
  const r = crypto.randomInt(100);
  if (r < 30) {
    // accept's shape: the insert in a data-modifying CTE, the queue row in the same statement; a group commit
    // writes several accounts' emails in one statement.
    const rows = Array.from({ length: 1 + crypto.randomInt(3) }, () => emailValues(1 + crypto.randomInt(5))).flat();
    await sql`with inserted as (insert into emails ${sql(rows)} returning id) insert into delivery_queue (email_id) select id from inserted`;
  } else if (r < 45) {
    // a group of delivery outcomes: emails of any accounts and statuses move in one statement.
    await sql`update emails set status = ${pick(STATUSES)} where id in (select id from emails order by random() limit 6)`;
  } else if (r < 60) {
    // a delivery outcome or feedback: one email's status moves (perhaps to the status it has).
    await sql`update emails set status = ${pick(STATUSES)}, attempts = attempts + 1
      where id = (select id from emails where account_id = ${pick(ACCOUNTS)} order by random() limit 1)`;
  } else if (r < 65) {
    // a write that moves no status (a lease, content removal): must not count.
    await sql`update emails set lease_until = now(), html = '' where id in (select id from emails order by random() limit 3)`;
  } else if (r < 72) {
    const account = pick(ACCOUNTS);
    await sql`insert into batch_jobs (id, account_id, total_count) values (${nextId('bat')}, ${account}, 3)`;
    await sql`update batch_jobs set status = ${pick(['processing', 'completed', 'failed'])}
      where id = (select id from batch_jobs where account_id = ${account} order by random() limit 1)`;
  } else if (r < 80) {
    await sql`insert into scheduled_emails (id, account_id, draft, from_address, to_addresses, subject, scheduled_at)
      values (${nextId('sch')}, ${pick(ACCOUNTS)}, '{}', 'a@example.com', '{b@example.net}', 's', now() + interval '1 day')`;
    await sql`update scheduled_emails set status = ${pick(['sent', 'cancelled'])}
      where id = (select id from scheduled_emails where status = 'enqueued' order by random() limit 1)`;
  } else if (r < 92) {
    // rolled back: inserts and status changes that must leave no trace.
    await sql
      .begin(async (tx) => {
        await tx`insert into emails ${tx(emailValues(3))}`;
        await tx`update emails set status = 'bounced' where id in (select id from emails order by random() limit 2)`;
        await tx`insert into batch_jobs (id, account_id, total_count) values (${nextId('bat')}, ${pick(ACCOUNTS)}, 1)`;
        throw new Error('rollback');
      })
      .catch((err: Error) => {
        if (err.message !== 'rollback') throw err;
      });
  } else {
    await sql`with gone as (delete from delivery_queue where email_id in (select id from emails order by random() limit 2) returning email_id)
      delete from emails where id in (select email_id from gone) and not exists (select 1 from events where email_id = emails.id)`;
  }
}

describe('list counters (migration 0014)', () => {
  it('equal count(*) after concurrent inserts, status changes, deletes and rollbacks', async () => {
    await sql`insert into emails ${sql(emailValues(50, 'acc_a'))}`;
    const writers = 10;
    const perWriter = 120;
    let deadlocks = 0;
    await Promise.all(
      Array.from({ length: writers }, async () => {
        for (let i = 0; i < perWriter; i += 1) {
          // A deadlock between two random multi-row writes is PostgreSQL's answer, not a counting error:
          // the loser is rolled back whole, which the counters must survive too.
          await randomWrite().catch((err: { code?: string }) => {
            if (err.code !== '40P01') throw err;
            deadlocks += 1;
          });
        }
      }),
    );
    const [{ emails, batches, scheduled }] = await sql<[{ emails: number; batches: number; scheduled: number }]>`
      select (select count(*) from emails)::int as emails, (select count(*) from batch_jobs)::int as batches,
        (select count(*) from scheduled_emails)::int as scheduled`;
    expect(emails).toBeGreaterThan(200);
    expect(batches).toBeGreaterThan(20);
    expect(scheduled).toBeGreaterThan(20);
    expect(await mismatches(sql)).toEqual([]);
    expect(deadlocks).toBeLessThan(writers * perWriter);
  });

  it('answer pages and totals equal to plain offset queries, for every filter', async () => {
    const db = sql as unknown as Sql;
    const emails = createEmailsRepo(db);
    await sql`insert into emails ${sql(emailValues(300, 'acc_b').map((e, i) => ({ ...e, job_id: e.job_type === 'direct' ? '' : `bat_x${i % 4}` })))}`;
    const filters: EmailFilter[] = [
      {},
      { status: 'delivered' },
      { jobType: 'batch' },
      { status: 'pending', jobType: 'direct' },
      { jobId: 'bat_x1' },
      { jobId: 'bat_x2', status: 'pending' },
    ];
    for (const f of filters) {
      const page = await emails.list('acc_b', f, 7, 14);
      const expected = await sql<{ id: string }[]>`select id from emails where account_id = 'acc_b'
        ${f.status ? sql`and status = ${f.status}` : sql``} ${f.jobType ? sql`and job_type = ${f.jobType}` : sql``}
        ${f.jobId ? sql`and job_id = ${f.jobId}` : sql``} order by id desc`;
      expect(page.total, JSON.stringify(f)).toBe(expected.length);
      expect(
        page.rows.map((r) => r.id),
        JSON.stringify(f),
      ).toEqual(expected.slice(14, 21).map((r) => r.id));
    }
    const batch = await createBatchRepo(db).list('acc_b', undefined, 5, 2);
    const batchIds = await sql<{ id: string }[]>`select id from batch_jobs where account_id = 'acc_b' order by id desc`;
    expect([batch.total, batch.rows.map((r) => r.id)]).toEqual([
      batchIds.length,
      batchIds.slice(2, 7).map((r) => r.id),
    ]);
    const sched = await createScheduledRepo(db).list('acc_b', 'enqueued', 5, 0);
    const schedIds = await sql<
      { id: string }[]
    >`select id from scheduled_emails where account_id = 'acc_b' and status = 'enqueued' order by id desc`;
    expect([sched.total, sched.rows.map((r) => r.id)]).toEqual([
      schedIds.length,
      schedIds.slice(0, 5).map((r) => r.id),
    ]);
  });

  it('survive TRUNCATE of the listed tables', async () => {
    await sql`truncate delivery_queue, emails, batch_jobs, scheduled_emails cascade`;
    await sql`insert into emails ${sql(emailValues(4, 'acc_c'))}`;
    expect(await mismatches(sql)).toEqual([]);
    const [{ n }] = await sql<[{ n: number }]>`select sum(n)::int as n from list_counts`;
    expect(n).toBe(4);
  });
});

describe('migration 0014 on existing rows', () => {
  const name = `t_mig14_${crypto.randomBytes(5).toString('hex')}`;
  const admin = postgres(inject('pgAdminUrl'), { max: 1, onnotice: () => {} });
  let old: postgres.Sql | undefined;
  afterAll(async () => {
    await old?.end();
    await admin.unsafe(`drop database if exists ${name}`);
    await admin.end();
  });

  it('counts the rows written before it', async () => {
    await admin.unsafe(`create database ${name}`);
    old = postgres(inject('pgAdminUrl').replace(/\/postgres$/, `/${name}`), { max: 1, onnotice: () => {} });
    for (const m of MIGRATIONS.filter((x) => x.version < 14)) await old.unsafe(m.sql);
    await old`insert into accounts (id, name) values ('acc_a', 'a'), ('acc_b', 'b')`;
    await old`insert into emails ${old(emailValues(40, 'acc_a').map((e, i) => ({ ...e, mailboxes: {}, status: STATUSES[i % 5]! })))}`;
    await old`insert into emails ${old(emailValues(7, 'acc_b').map((e) => ({ ...e, mailboxes: {} })))}`;
    await old`insert into batch_jobs (id, account_id, total_count, status) values ('bat_1', 'acc_a', 1, 'completed'), ('bat_2', 'acc_a', 1, 'failed')`;
    await old.unsafe(MIGRATIONS.find((x) => x.version === 14)!.sql);
    expect(await mismatches(old)).toEqual([]);
    const [{ n }] = await old<
      [{ n: number }]
    >`select sum(n)::int as n from list_counts where list = 'emails' and account_id = 'acc_a' and status = 'bounced'`;
    expect(n).toBe(8);
  });
});
