import { Client, Connection } from '@temporalio/client';
import { describe, expect, inject, it } from 'vitest';
import { createSql, type Sql } from '../../src/db/sql.js';
import { retentionScheduleId } from '../../src/temporal/retention-schedule.js';
import { admin, createAccount } from '../helpers/admin-fixtures.js';
import { idDaysAgo, insertEmail } from '../helpers/backdated-rows.js';
import { call, eventually, validEmail } from '../helpers/http.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { inMs } from '../helpers/time.js';
import { useStack } from '../helpers/use-stack.js';

/** Retention's schedule and erasure against the whole service (REST, PostgreSQL, Temporal, a receiving SMTP server). */
const stack = useStack();

const db = () => createSql(stack.databaseUrl, { max: 1 });
type Email = Record<string, unknown> & {
  id: string;
  status: string;
  to: string[];
  subject: string;
  html: string;
  text: string;
  attachments: unknown[];
};
const getEmail = async (id: string) =>
  (await call<Email>('GET', `${stack.api}/emails/${id}`, { token: stack.apiKey })).body;

async function send(body: Record<string, unknown>): Promise<string> {
  const res = await call<{ id: string }>('POST', `${stack.api}/emails`, {
    token: stack.apiKey,
    body: validEmail(body),
  });
  expect(res.status, res.text).toBe(200);
  return res.body.id;
}
const settled = (id: string, status = 'delivered') =>
  eventually(async () => (await getEmail(id)).status === status, 30_000, 100);

describe('retention', () => {
  it('runs as an hourly Temporal schedule; an email whose content expired still answers GET /emails/{id} in the same shape', async () => {
    const connection = await Connection.connect({ address: inject('temporalAddress') });
    const sql = db();
    try {
      const schedule = new Client({ connection }).schedule.getHandle(retentionScheduleId(stack.taskQueue));
      const described = await schedule.describe();
      expect(described.action).toMatchObject({
        type: 'startWorkflow',
        workflowType: 'purgeExpiredDataWorkflow',
        taskQueue: stack.taskQueue,
      });
      expect(described.spec.intervals?.[0]?.every).toBe(3_600_000);

      const young = await send({
        subject: 'Kept',
        html: '<p>kept</p>',
        attachments: [{ filename: 'a.txt', content: Buffer.from('a').toString('base64') }],
      });
      await settled(young);
      const old = idDaysAgo('email', 31);
      await insertEmail(sql, { id: old, accountId: stack.accountId });
      const before = await getEmail(old);
      expect(before).toMatchObject({ text: 'text body', attachments: [expect.any(Object)] });

      await schedule.trigger();
      const after = await eventually(
        async () => {
          const e = await getEmail(old);
          return e.text === '' && e;
        },
        45_000,
        200,
      );
      expect(Object.keys(after).sort()).toEqual(Object.keys(before).sort());
      expect(after).toEqual({ ...before, html: '', text: '', headers: {}, attachments: [] });
      expect(await getEmail(young)).toMatchObject({
        subject: 'Kept',
        html: expect.stringContaining('kept'),
        attachments: [expect.any(Object)],
      });
      // Lists read what remains.
      const listed = await call<{ data: { id: string; subject: string }[] }>(
        'GET',
        `${stack.api}/emails?page_size=100`,
        { token: stack.apiKey },
      );
      expect(listed.body.data.find((e) => e.id === old)).toMatchObject({ subject: 'Subject' });
    } finally {
      await connection.close();
      await sql.end();
    }
  });
});

const GONE = 'Gone.Person@Example.NET';
const KEY = GONE.toLowerCase();

/** Every row of every table (bytea shown as hex) that mentions `needle` (lower case). */
async function traces(sql: Sql, needle: string): Promise<string[]> {
  const tables = await sql<{ name: string }[]>`
    select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`;
  const hex = Buffer.from(needle).toString('hex');
  const found: string[] = [];
  for (const { name } of tables) {
    const [row] = await sql<{ n: number }[]>`
      select count(*)::int as n from ${sql(name)} x where strpos(lower(x::text), ${needle}) > 0 or strpos(lower(x::text), ${hex}) > 0`;
    if (row!.n > 0) found.push(`${name}: ${row!.n}`);
  }
  return found;
}

describe('erasure', () => {
  it('erases every trace of an address (any case) across the installation; its suppression still refuses a later send', async () => {
    const sql = db();
    try {
      const a = await send({
        to: [`Gone Person <${GONE}>`, 'keep@example.net'],
        subject: `For ${KEY}`,
        text: 'Dear Gone Person',
        headers: { 'X-Ref': KEY },
        tags: { user: 'gone' },
        attachments: [{ filename: 'a.txt', content: Buffer.from(`to ${KEY}`).toString('base64') }],
      });
      await settled(a);
      stack.sink.refuseRecipient = (r) =>
        r.toLowerCase() === KEY ? `550 5.1.1 <${r}>: Recipient address rejected: User unknown` : undefined;
      const b = await send({ to: [GONE] });
      await settled(b, 'bounced');
      const scheduled = await call<{ id: string }>('POST', `${stack.api}/emails/schedule`, {
        token: stack.apiKey,
        body: validEmail({ to: [`Gone Person <${GONE}>`], scheduled_at: inMs(86_400_000) }),
      });
      expect(
        (await call('DELETE', `${stack.api}/emails/scheduled/${scheduled.body.id}`, { token: stack.apiKey })).status,
      ).toBe(200);
      // What other paths leave: a webhook attempt whose receiver echoed the address, a repeat window, a caught copy, an idempotent answer.
      const [delivery] = await sql<{ id: string }[]>`select id from events where email_id = ${a} and type = 'delivery'`;
      await sql`insert into webhooks (id, account_id, url, events, secret, deleted_at) values ('wh_erase', ${stack.accountId}, 'https://example.org/h', '{delivery}', 's', now())`;
      await sql`insert into webhook_deliveries (id, webhook_id, event_id, account_id, status) values ('whd_erase', 'wh_erase', ${delivery!.id}, ${stack.accountId}, 'succeeded')`;
      await sql`insert into webhook_attempts (delivery_id, attempt, started_at, status_code, latency_ms, response_excerpt) values ('whd_erase', 1, now(), 200, 3, ${`got ${GONE}`})`;
      await sql`insert into tracking_windows (email_id, kind, target, last_event_at) values (${a}, 'open', '\\x', now())`;
      await sql`insert into caught_messages (id, envelope_to, size, raw) values ('cau_erase', ${[GONE]}, 3, ${Buffer.from(`To: ${GONE}`)})`;
      await sql`insert into idempotency_keys (account_id, key, operation, request_hash, response) values (${stack.accountId}, 'k1', 'send', '\\x00', ${sql.json({ to: GONE })})`;
      expect((await traces(sql, KEY)).length).toBeGreaterThan(5);
      const before = await getEmail(a);

      const erased = await admin(stack, 'POST', '/recipients/erase', { address: 'GONE.person@example.net' });
      expect(erased.body).toEqual({
        emails: 2,
        scheduled_emails: 1,
        attachments: 1,
        events: expect.any(Number),
        webhook_attempts: 1,
        tracking_windows: 1,
        caught_messages: 1,
        suppressions: 1,
        idempotency_keys: 1,
        skipped_pending: 0,
        inbound_emails: 0,
      });
      expect(erased.body.events).toBeGreaterThanOrEqual(2);
      expect(await traces(sql, KEY)).toEqual([]);
      expect(await traces(sql, 'gone person')).toEqual([]);

      // What remains answers as before, in the same shape.
      const after = await getEmail(a);
      expect(Object.keys(after).sort()).toEqual(Object.keys(before).sort());
      expect(after).toMatchObject({
        id: a,
        status: 'delivered',
        to: ['erased@erased.invalid', 'keep@example.net'],
        subject: '',
        text: '',
        html: '',
        headers: {},
        tags: {},
        attachments: [],
      });
      const suppressions = await admin<{ suppressions: { email_address: string; reason: string; email_id: string }[] }>(
        stack,
        'GET',
        `/accounts/${stack.accountId}/suppressions`,
      );
      expect(suppressions.body.suppressions).toEqual([
        expect.objectContaining({
          email_address: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
          reason: 'bounce',
          email_id: b,
        }),
      ]);

      // The suppression still holds, whatever the case of the address.
      stack.sink.refuseRecipient = () => undefined;
      const received = stack.sink.messages.length;
      const d = await send({ to: [KEY.toUpperCase()] });
      await settled(d, 'bounced');
      const detail = await admin<{ events: { type: string; data: { bounce_subtype?: string } }[] }>(
        stack,
        'GET',
        `/emails/${d}`,
      );
      expect(detail.body.events.find((e) => e.type === 'bounce')?.data.bounce_subtype).toBe('Suppressed');
      expect(stack.sink.messages.length).toBe(received);
    } finally {
      await sql.end();
    }
  });

  it('erases in one account only when asked to', async () => {
    const id = await send({ to: ['scoped@example.net'] });
    await settled(id);
    const other = await createAccount(stack, 'other');
    expect(
      (await admin(stack, 'POST', '/recipients/erase', { address: 'scoped@example.net', account_id: other })).body,
    ).toMatchObject({ emails: 0 });
    expect((await getEmail(id)).to).toEqual(['scoped@example.net']);
    expect(
      (await admin(stack, 'POST', '/recipients/erase', { address: 'scoped@example.net', account_id: stack.accountId }))
        .body,
    ).toMatchObject({ emails: 1 });
    expect((await getEmail(id)).to).toEqual(['erased@erased.invalid']);
  });

  it("erases one email's content, keeping its addresses and status; refuses a pending one", async () => {
    const id = await send({
      to: ['content@example.net'],
      subject: 'Private',
      headers: { 'X-A': 'b' },
      attachments: [{ filename: 'a.txt', content: 'YQ==' }],
    });
    await settled(id);
    const res = await admin(stack, 'POST', `/emails/${id}/erase`, {});
    expect(res.body).toMatchObject({ emails: 1, attachments: 1, skipped_pending: 0 });
    expect(await getEmail(id)).toMatchObject({
      id,
      status: 'delivered',
      to: ['content@example.net'],
      subject: '',
      text: '',
      html: '',
      headers: {},
      tags: {},
      attachments: [],
    });

    const sql = db();
    try {
      const pending = idDaysAgo('email', 0);
      await insertEmail(sql, { id: pending, accountId: stack.accountId, status: 'pending' });
      const refused = await admin(stack, 'POST', `/emails/${pending}/erase`, {}, 409);
      expect(refused.body).toMatchObject({ error: 'conflict', message: expect.stringContaining('pending') });
      expect((await getEmail(pending)).text).toBe('text body');
    } finally {
      await sql.end();
    }
  });

  it('answers 4xx on bad input', async () => {
    await admin(stack, 'POST', '/emails/em_nonexistent/erase', {}, 404);
    for (const address of ['', 'not-an-address', 'Jane <jane@example.net>', 'a@example.net, b@example.net']) {
      const res = await admin(stack, 'POST', '/recipients/erase', { address }, 400);
      expect(res.body).toMatchObject({ error: 'validation error', message: expect.stringContaining('address') });
    }
    await admin(stack, 'POST', '/recipients/erase', {}, 400);
    await admin(stack, 'POST', '/recipients/erase', { address: 'a@example.net', account_id: 'acc_missing' }, 404);
    const anonymous = await call('POST', `${stack.admin}/recipients/erase`, { body: { address: 'a@example.net' } });
    expect(anonymous.status).toBe(401);
    expect(
      (
        await call('POST', `${stack.admin}/recipients/erase`, {
          token: `${ADMIN_TOKEN}x`,
          body: { address: 'a@example.net' },
        })
      ).status,
    ).toBe(401);
  });
});
