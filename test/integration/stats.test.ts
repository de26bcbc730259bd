import * as grpc from '@grpc/grpc-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStatsRepo } from '../../src/db/index.js';
import type { Sql } from '../../src/db/sql.js';
import { newId } from '../../src/ids.js';
import { admin, createKey, createSender } from '../helpers/admin-fixtures.js';
import { idDaysAgo } from '../helpers/backdated-rows.js';
import { bearer, expectSameError, failed, ok, rpc, useGrpcClients } from '../helpers/grpc-client.js';
import { call, expectValidationError, validEmail, eventually } from '../helpers/http.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * GET /stats (CONTRACT.md "Stats and timelines"; docs/api.md "Stats") against the real service. The emails and
 * events are written as delivery writes them, so each count is known exactly; the rollup is folded by the
 * worker's timer and by the tests themselves, and every answer must be the same whether or not it ran.
 */
const stack = useStack();
const clients = useGrpcClients(stack);
let db: postgres.Sql;
beforeAll(() => {
  db = postgres(stack.databaseUrl, { max: 4, onnotice: () => {} });
});
afterAll(async () => {
  await db?.end();
});

const repo = () => createStatsRepo(db as unknown as Sql);
const today = () => new Date().toISOString().slice(0, 10);

interface Row {
  key: string;
  accepted: number;
  delivered: number;
  deferred: number;
  bounced: number;
  complained: number;
  opened: number;
  clicked: number;
  unsubscribed: number;
  sample_replies: string[];
}
type Answer = { stats: Row[]; from: string; to: string; group_by: string };

const zero = {
  accepted: 0,
  delivered: 0,
  deferred: 0,
  bounced: 0,
  complained: 0,
  opened: 0,
  clicked: 0,
  unsubscribed: 0,
};
const counts = (c: Partial<typeof zero>) => ({ ...zero, ...c });

async function stats(key: string, query = ''): Promise<Answer> {
  const res = await call<Answer>('GET', `${stack.api}/stats${query}`, { token: key });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** The rows without their sample replies, by key. */
const byKey = (a: Answer) =>
  Object.fromEntries(a.stats.map(({ key, sample_replies: _s, ...c }) => [key, c])) as Record<string, typeof zero>;

interface EmailSpec {
  accountId: string;
  to: string[];
  cc?: string[];
  senderDomain: string;
  stream?: 'transactional' | 'broadcast';
  tags?: Record<string, string>;
  status?: string;
  lastError?: string;
  remaining?: string[];
  daysAgo?: number;
}

async function insertEmail(e: EmailSpec): Promise<string> {
  const id = e.daysAgo === undefined ? newId('email') : idDaysAgo('email', e.daysAgo);
  const mailboxes = {
    from: { name: '', address: `news@${e.senderDomain}` },
    to: e.to.map((address) => ({ name: '', address })),
    cc: (e.cc ?? []).map((address) => ({ name: '', address })),
    bcc: [],
    replyTo: [],
  };
  await db`
    insert into emails (id, account_id, job_type, from_address, to_addresses, cc_addresses, subject, tags, size_bytes,
      status, header_message_id, mailboxes, sender_domain, stream, last_error, remaining_recipients, attempts, created_at)
    values (${id}, ${e.accountId}, 'direct', ${`news@${e.senderDomain}`}, ${e.to}, ${e.cc ?? []}, 'Stats',
      ${db.json(e.tags ?? {})}, 100, ${e.status ?? 'delivered'}, ${`<${id}@stats.test>`}, ${db.json(mailboxes)},
      ${e.senderDomain}, ${e.stream ?? 'transactional'}, ${e.lastError ?? null}, ${e.remaining ?? null},
      ${e.lastError === undefined ? 0 : 1}, now() - make_interval(days => ${e.daysAgo ?? 0}))`;
  return id;
}

async function insertEvent(
  q: postgres.Sql | postgres.TransactionSql,
  accountId: string,
  emailId: string,
  type: string,
  data: Record<string, unknown> = {},
): Promise<void> {
  await q`insert into events (id, email_id, account_id, type, data)
    values (${newId('event')}, ${emailId}, ${accountId}, ${type}, ${q.json(data as never)})`;
}

const bounce = (subtype: 'General' | 'Suppressed', recipients: [string, string][], type = 'Permanent') => ({
  bounce_type: type,
  bounce_subtype: subtype,
  bounced_recipients: recipients.map(([email_address, diagnostic_code]) => ({
    email_address,
    status: '5.1.1',
    diagnostic_code,
  })),
});

/** Folds the account until it is caught up (as the worker's timer does, which may run meanwhile). */
async function foldAll(accountId: string): Promise<void> {
  while ((await repo().foldAccount(accountId)) > 0);
}

describe('GET /stats', () => {
  it('counts recipients by what happened to them, in every grouping, before and after the fold', async () => {
    const a = await createSender(stack, 'stats a', 'stats-a.test');
    const other = await createSender(stack, 'stats other', 'stats-other.test');
    const A = a.accountId;
    // Three recipients: two delivered, one bounced with the server's reply naming the address.
    const e1 = await insertEmail({
      accountId: A,
      to: ['a@gmail.com', 'B@Outlook.com'],
      cc: ['c@outlook.com'],
      senderDomain: 'stats-a.test',
      tags: { campaign: 'welcome' },
    });
    await insertEvent(db, A, e1, 'send');
    await insertEvent(db, A, e1, 'delivery', { recipients: ['a@gmail.com', 'b@outlook.com'], smtp_response: '250 ok' });
    await insertEvent(
      db,
      A,
      e1,
      'bounce',
      bounce('General', [['c@outlook.com', '550 5.1.1 <c@outlook.com>: no such user']]),
    );
    // Broadcast: opened twice, clicked, unsubscribed, complained.
    const e2 = await insertEmail({
      accountId: A,
      to: ['d@gmail.com'],
      senderDomain: 'news.stats-a.test',
      stream: 'broadcast',
    });
    await insertEvent(db, A, e2, 'send');
    await insertEvent(db, A, e2, 'delivery', { recipients: ['d@gmail.com'], smtp_response: '250 ok' });
    await insertEvent(db, A, e2, 'open');
    await insertEvent(db, A, e2, 'open');
    await insertEvent(db, A, e2, 'click', { link: 'https://x.test/' });
    await insertEvent(db, A, e2, 'unsubscribe', { recipient: 'd@gmail.com', topic: null });
    await insertEvent(db, A, e2, 'complaint', {
      complaint_feedback_type: 'abuse',
      complained_recipients: ['d@gmail.com'],
    });
    // Deferred: pending after a 4xx, still to be retried.
    await insertEmail({
      accountId: A,
      to: ['e@outlook.com'],
      senderDomain: 'stats-a.test',
      status: 'pending',
      lastError: '421 4.7.0 e@outlook.com deferred, try again later',
      tags: { campaign: 'welcome' },
    });
    // Pending, not tried yet; and one whose every recipient was suppressed (accepted, never offered).
    await insertEmail({ accountId: A, to: ['f@yahoo.com'], senderDomain: 'stats-a.test', status: 'pending' });
    const e5 = await insertEmail({
      accountId: A,
      to: ['g@gmail.com'],
      senderDomain: 'stats-a.test',
      status: 'bounced',
    });
    await insertEvent(db, A, e5, 'bounce', bounce('Suppressed', [['g@gmail.com', 'suppressed']]));
    // Accepted 40 days ago: outside the default range.
    const old = await insertEmail({ accountId: A, to: ['h@gmail.com'], senderDomain: 'stats-a.test', daysAgo: 40 });
    await insertEvent(db, A, old, 'send');
    await insertEvent(db, A, old, 'delivery', { recipients: ['h@gmail.com'], smtp_response: '250 ok' });
    // Another account's mail, to the same domains: never counted in A's.
    const x = await insertEmail({ accountId: other.accountId, to: ['z@gmail.com'], senderDomain: 'stats-other.test' });
    await insertEvent(db, other.accountId, x, 'send');
    await insertEvent(db, other.accountId, x, 'bounce', bounce('General', [['z@gmail.com', '550 nope']]));

    const expected = {
      day: {
        [today()]: counts({
          accepted: 7,
          delivered: 3,
          deferred: 1,
          bounced: 1,
          complained: 1,
          opened: 1,
          clicked: 1,
          unsubscribed: 1,
        }),
      },
      recipient_domain: {
        'gmail.com': counts({ accepted: 3, delivered: 2, complained: 1, opened: 1, clicked: 1, unsubscribed: 1 }),
        'outlook.com': counts({ accepted: 3, delivered: 1, deferred: 1, bounced: 1 }),
        'yahoo.com': counts({ accepted: 1 }),
      },
      domain: {
        'news.stats-a.test': counts({
          accepted: 1,
          delivered: 1,
          complained: 1,
          opened: 1,
          clicked: 1,
          unsubscribed: 1,
        }),
        'stats-a.test': counts({ accepted: 6, delivered: 2, deferred: 1, bounced: 1 }),
      },
      tag: { 'campaign=welcome': counts({ accepted: 4, delivered: 2, deferred: 1, bounced: 1 }) },
      stream: {
        broadcast: counts({ accepted: 1, delivered: 1, complained: 1, opened: 1, clicked: 1, unsubscribed: 1 }),
        transactional: counts({ accepted: 6, delivered: 2, deferred: 1, bounced: 1 }),
      },
    };
    const check = async () => {
      const days = await stats(a.key);
      expect(days.stats).toHaveLength(30);
      expect(days.group_by).toBe('day');
      expect(byKey(days)[today()]).toEqual(expected.day[today()]);
      expect(days.stats.slice(0, -1).every((r) => r.accepted === 0)).toBe(true);
      for (const g of ['recipient_domain', 'domain', 'tag', 'stream'] as const)
        expect(byKey(await stats(a.key, `?group_by=${g}`)), g).toEqual(expected[g]);
      const domains = await stats(a.key, '?group_by=recipient_domain');
      const outlook = domains.stats.find((r) => r.key === 'outlook.com')!;
      expect([...outlook.sample_replies].sort()).toEqual([
        '421 4.7.0 <address> deferred, try again later',
        '550 5.1.1 <address>: no such user',
      ]);
      expect(domains.stats.find((r) => r.key === 'yahoo.com')!.sample_replies).toEqual([]);
      const other40 = await stats(a.key, `?from=${idDate(41)}&to=${idDate(39)}`);
      expect(other40.stats.map((r) => r.accepted)).toEqual([0, 1, 0]);
    };
    await check();
    // The fold never passes a transaction open anywhere on the server (the horizon is the cluster's), and other
    // test files share this server: fold until it has passed this file's events.
    const rollupRows = async () =>
      (await db<{ n: number }[]>`select count(*)::int as n from stats_rollup where account_id = ${A}`)[0]!.n;
    await eventually(async () => {
      await foldAll(A);
      return (await rollupRows()) > 0;
    });
    await check();
    // A fold run again (or by two processes at once) finds nothing new and counts nothing twice.
    await Promise.all([repo().foldAccount(A), repo().foldAccount(A), foldAll(A)]);
    await check();
    // The other account sees only its own.
    expect(byKey(await stats(other.key, '?group_by=recipient_domain'))).toEqual({
      'gmail.com': counts({ accepted: 1, bounced: 1 }),
    });
  });

  it('counts an event committed after a later one exactly once: the fold never passes an open transaction', async () => {
    const a = await createSender(stack, 'stats order', 'stats-order.test');
    const A = a.accountId;
    const e = await insertEmail({ accountId: A, to: ['late@gmail.com'], senderDomain: 'stats-order.test' });
    const early = postgres(stack.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let started!: () => void;
      const begun = new Promise<void>((r) => (started = r));
      // The `send` takes its transaction id first and commits last.
      const slow = early.begin(async (tx) => {
        await tx`select pg_current_xact_id()`;
        await insertEvent(tx, A, e, 'send');
        started();
        await held;
      });
      await begun;
      await insertEvent(db, A, e, 'delivery', { recipients: ['late@gmail.com'], smtp_response: '250 ok' });
      await foldAll(A);
      expect(byKey(await stats(a.key))[today()]).toEqual(counts({ delivered: 1 }));
      release();
      await slow;
      expect(byKey(await stats(a.key))[today()]).toEqual(counts({ accepted: 1, delivered: 1 }));
      await foldAll(A);
      await eventually(async () => {
        const [mark] = await db<{ behind: boolean }[]>`
          select exists (select 1 from events where account_id = ${A} and (tx, id) > (k.tx, k.id)) as behind
          from stats_fold_marks k where account_id = ${A}`;
        return mark?.behind === false;
      });
      expect(byKey(await stats(a.key))[today()]).toEqual(counts({ accepted: 1, delivered: 1 }));
    } finally {
      await early.end();
    }
  });

  it('refuses a bad range or grouping with a 400 naming the parameter', async () => {
    const a = await createSender(stack, 'stats range', 'stats-range.test');
    const bad = (query: string) => call('GET', `${stack.api}/stats${query}`, { token: a.key });
    expectValidationError(await bad('?from=yesterday'), 'bad from', /^from must be an ISO 8601/);
    expectValidationError(await bad('?to=2026-02-30'), 'no such day', /^to must be an ISO 8601/);
    expectValidationError(await bad('?from=2026-03-02&to=2026-03-01'), 'from after to', /^from .* is after to/);
    expectValidationError(await bad('?from=2026-01-01&to=2026-04-02'), 'over 90 days', /^from: .* over 90 days/);
    expectValidationError(await bad('?group_by=week'), 'group_by', /^group_by must be one of day, domain/);
    // 90 days exactly is allowed: 91 calendar days listed.
    expect((await stats(a.key, '?from=2026-01-01&to=2026-04-01')).stats).toHaveLength(91);
    const answer = await stats(a.key, '?from=2026-01-01T10:00:00%2B02:00&to=2026-01-03');
    expect(answer).toMatchObject({ from: '2026-01-01T00:00:00.000Z', to: '2026-01-04T00:00:00.000Z', group_by: 'day' });
    expect(answer.stats.map((r) => r.key)).toEqual(['2026-01-01', '2026-01-02', '2026-01-03']);
  });

  it('is read by keys of permission all and read_only, not send_only; the operator reads any account', async () => {
    const a = await createSender(stack, 'stats perm', 'stats-perm.test');
    const e = await insertEmail({ accountId: a.accountId, to: ['p@gmail.com'], senderDomain: 'stats-perm.test' });
    await insertEvent(db, a.accountId, e, 'send');
    const readOnly = await createKey(stack, a.accountId, 'read_only');
    const sendOnly = await createKey(stack, a.accountId, 'send_only');
    const mine = await stats(a.key, '?group_by=stream');
    expect(await stats(readOnly.key, '?group_by=stream')).toEqual(mine);
    const denied = await call('GET', `${stack.api}/stats`, { token: sendOnly.key });
    expect(denied.status, denied.text).toBe(403);
    expect(denied.body).toMatchObject({ error: 'permission denied', message: expect.stringMatching(/stats/) });
    const operator = await admin(stack, 'GET', `/accounts/${a.accountId}/stats/grouped?group_by=stream`);
    expect(operator.body).toEqual(mine);
    await admin(stack, 'GET', `/accounts/acc_nobody/stats/grouped`, undefined, 404);
    const badGroup = await admin(stack, 'GET', `/accounts/${a.accountId}/stats/grouped?group_by=x`, undefined, 400);
    expect(badGroup.body).toMatchObject({ error: 'validation error' });
  });

  it('over gRPC: the same answer and the same errors as REST', async () => {
    const a = await createSender(stack, 'stats grpc', 'stats-grpc.test');
    const res = await call('POST', `${stack.api}/emails`, {
      token: a.key,
      body: validEmail({ from: 'x@stats-grpc.test', to: ['one@gmail.com', 'two@outlook.com'], tags: { k: 'v' } }),
    });
    expect(res.status, res.text).toBe(200);
    await eventually(async () => (await stats(a.key, '?group_by=tag')).stats[0]?.delivered === 2);
    const rest = await stats(a.key, '?group_by=recipient_domain');
    expect(byKey(rest)).toEqual({
      'gmail.com': counts({ accepted: 1, delivered: 1 }),
      'outlook.com': counts({ accepted: 1, delivered: 1 }),
    });
    const key = bearer(a.key);
    expect(ok(await rpc(clients.email, 'GetStats', { group_by: 'recipient_domain' }, key))).toEqual(rest);
    const err = failed(await rpc(clients.email, 'GetStats', { group_by: 'week' }, key));
    const restErr = await call('GET', `${stack.api}/stats?group_by=week`, { token: a.key });
    expectSameError(err, grpc.status.INVALID_ARGUMENT, restErr.body as never);
  });
});

/** The UTC day `days` ago, YYYY-MM-DD. */
function idDate(days: number): string {
  return new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);
}
