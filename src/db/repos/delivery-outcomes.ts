import { jsonb, type Sql } from '../sql.js';
import type { LeasedOutcome } from '../../domain/entities/delivery.js';

/** How recordOutcomes names an outcome in its answer: an attempt's token and the email. */
export const outcomeKey = (token: string, emailId: string) => `${token} ${emailId}`;

/**
 * Records many attempts' outcomes with their events and suppressions in one statement, each only by the
 * holder of its email's lease (a stale attempt changes nothing). Batch emails move their jobs' counters in
 * the same statement (summed per job), so counters are exact and never go back. The events' trigger queues
 * their webhook deliveries in the same transaction. Answers the account of each email recorded, by email id.
 *
 * One statement for a whole group of emails, where one per email cost a round trip, a parse and a commit
 * each (docs/benchmark.md, "Where PostgreSQL's time goes").
 */
export async function recordOutcomes(sql: Sql, entries: LeasedOutcome[]): Promise<Map<string, string>> {
  if (entries.length === 0) return new Map();
  const outcomes = entries.map(({ token, outcome: o }) => ({
    id: o.id,
    token,
    status: o.status,
    message_id: o.messageId ?? null,
    response: o.response ?? null,
    sent_at: o.sentAt?.toISOString() ?? null,
    error: o.error ?? null,
    // Only a pending outcome sets the recipients still to try; the others keep what the row has.
    set_remaining: o.status === 'pending',
    remaining: o.status === 'pending' ? (o.remaining ?? null) : null,
  }));
  const events = entries.flatMap(({ outcome: o }) =>
    o.events.map((e) => ({ email_id: o.id, id: e.id, type: e.type, data: e.data, at: e.at.toISOString() })),
  );
  const suppress = entries.flatMap(({ outcome: o }) =>
    o.suppress.map((s) => ({ email_id: o.id, id: s.id, address: s.address, reason: s.reason })),
  );
  const rows = await sql<{ id: string; account_id: string; token: string }[]>`
    with o as (
      select * from jsonb_to_recordset(${jsonb(sql, outcomes)}) as o(
        id text, token text, status text, message_id text, response text, sent_at timestamptz, error text, set_remaining boolean, remaining text[])),
    changed as (
      update emails m set status = o.status, message_id = coalesce(o.message_id, m.message_id),
        smtp_response = coalesce(o.response, m.smtp_response), sent_at = coalesce(o.sent_at, m.sent_at),
        last_error = o.error, lease_token = null, lease_until = null, answered_recipients = null,
        remaining_recipients = case when o.set_remaining then o.remaining else m.remaining_recipients end
      from o
      -- By primary key, with a pending test no index can serve: see email-deliveries-repo.ts.
      where m.id = any(${outcomes.map((o) => o.id)}) and m.id = o.id and m.lease_token = o.token
        and m.status is not distinct from 'pending'
      returning m.id, m.account_id, m.job_type, m.job_id, m.status, o.token),
    counted as (
      update batch_jobs b set sent_count = sent_count + c.sent, failed_count = failed_count + c.failed
      from (
        select job_id, count(*) filter (where status = 'delivered') as sent, count(*) filter (where status = 'bounced') as failed
        from changed where job_type = 'batch' group by job_id) c
      where b.id = c.job_id returning 1),
    recorded as (
      insert into events (id, email_id, account_id, type, data, created_at)
      select e.id, changed.id, changed.account_id, e.type, e.data, e.at
      from changed join jsonb_to_recordset(${jsonb(sql, events)}) as e(email_id text, id text, type text, data jsonb, at timestamptz)
        on e.email_id = changed.id
      returning 1),
    suppressed as (
      insert into suppressions (id, account_id, address, reason, email_id)
      select s.id, changed.account_id, s.address, s.reason, changed.id
      from changed join jsonb_to_recordset(${jsonb(sql, suppress)}) as s(email_id text, id text, address text, reason text)
        on s.email_id = changed.id
      on conflict (account_id, address, scope, topic) do nothing
      returning 1)
    select id, account_id, token from changed`;
  return new Map(rows.map((r) => [outcomeKey(r.token, r.id), r.account_id]));
}
