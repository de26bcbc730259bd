import { describe, expect, it } from 'vitest';
import { recordOutcomes } from '../../src/db/index.js';
import { createEmailDeliveriesRepo } from '../../src/db/index.js';
import { createSql, type Sql } from '../../src/db/sql.js';
import { call, validEmail } from '../helpers/http.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * The delivery statements look their emails up by primary key whatever the statistics say. The trap: the
 * statistics were taken when no email was pending (a young table, a quiet hour), then a backlog of pending
 * emails built up. Testing `status = 'pending'` then made the planner read every pending email through
 * the status index (or the whole table) for each group of outcomes. The scans each statement made are read
 * from PostgreSQL's own counters.
 */
const stack = useStack({ MAILER_ROLE: 'api' });
const BACKLOG = 2_000;

/** Scans of emails other than by primary key, as PostgreSQL counts them. */
async function otherScans(sql: Sql): Promise<number> {
  await sql`select pg_stat_clear_snapshot()`;
  const [row] = await sql<{ n: number }[]>`
    select (select seq_scan from pg_stat_user_tables where relname = 'emails')
      + (select coalesce(sum(idx_scan), 0) from pg_stat_user_indexes where relname = 'emails' and indexrelname <> 'emails_pkey') as n`;
  return Number(row!.n);
}

/** Runs `statement` on a connection of its own and answers the other scans it made (its statistics flushed first). */
async function scansOf(statement: (sql: Sql) => Promise<unknown>): Promise<number> {
  const own = createSql(stack.databaseUrl, { max: 1 });
  const observer = createSql(stack.databaseUrl, { max: 1 });
  try {
    await own`select pg_stat_force_next_flush()`;
    const before = await otherScans(observer);
    await statement(own);
    await own`select pg_stat_force_next_flush()`;
    // The flush happens once the backend is idle: poll briefly rather than assume when.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    return (await otherScans(observer)) - before;
  } finally {
    await Promise.all([own.end(), observer.end()]);
  }
}

/** BACKLOG pending emails leased to `token`, whose statistics say none is pending; answers three of them. */
async function staleBacklog(sql: Sql, token: string): Promise<string[]> {
  const res = await call('POST', `${stack.api}/emails`, { token: stack.apiKey, body: validEmail() });
  expect(res.status, res.text).toBe(200);
  const template = res.body.id as string;
  await sql`alter table emails set (autovacuum_enabled = off)`;
  await sql`
    insert into emails (id, account_id, api_key_id, job_type, job_id, from_address, to_addresses, subject, html, text_body,
      size_bytes, status, header_message_id, message_id, mailboxes, sender_domain, attempts, created_at)
    select 'em_plan' || lpad(i::text, 22, '0'), account_id, api_key_id, job_type, job_id, from_address, to_addresses, subject,
      html, text_body, size_bytes, 'delivered', 'plan' || i || '@example.com', '', mailboxes, sender_domain, 1, created_at
    from emails, generate_series(1, ${BACKLOG * 2}) i where id = ${template}`;
  await sql`analyze emails`;
  const ids = await sql<{ id: string }[]>`
    update emails set status = 'pending', lease_token = ${token}, lease_until = now() + interval '1 minute'
    where id in (select id from emails where id like 'em_plan%' order by id limit ${BACKLOG}) returning id`;
  return ids
    .map((r) => r.id)
    .sort()
    .slice(0, 3);
}

describe('delivery statements under stale statistics', () => {
  it('outcomes, leases and renewals touch emails only through the primary key', async () => {
    const setup = createSql(stack.databaseUrl, { max: 1 });
    try {
      const token = 'token-plan';
      const ids = await staleBacklog(setup, token);
      const repo = (sql: Sql) => createEmailDeliveriesRepo(sql);

      expect(await scansOf((sql) => repo(sql).renewLeases(ids, token, { seconds: 120, belowSeconds: 90 }))).toBe(0);
      expect(await scansOf((sql) => repo(sql).lease(ids, 'token-other', 60))).toBe(0);
      const outcomes = ids.map((id) => ({
        token,
        outcome: {
          id,
          status: 'delivered' as const,
          messageId: `<${id}@plan>`,
          response: '250 OK',
          sentAt: new Date(),
          events: [],
          suppress: [],
        },
      }));
      let recorded = new Map<string, string>();
      expect(
        await scansOf(async (sql) => {
          recorded = await recordOutcomes(sql, outcomes);
        }),
      ).toBe(0);
      expect(recorded.size).toBe(3);
      const statuses = await setup<{ status: string }[]>`select status from emails where id = any(${ids})`;
      expect(statuses.map((r) => r.status)).toEqual(['delivered', 'delivered', 'delivered']);
    } finally {
      await setup`alter table emails reset (autovacuum_enabled)`;
      await setup.end();
    }
  });
});
