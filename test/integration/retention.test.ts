import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRetentionRepo } from '../../src/db/index.js';
import { createSql, type Sql } from '../../src/db/sql.js';
import { createLogger } from '../../src/logger.js';
import { createRetentionService } from '../../src/services/retention-service.js';
import { idDaysAgo, insertEmail } from '../helpers/backdated-rows.js';
import { createTestDatabase } from '../helpers/stack.js';
import { inject } from 'vitest';

/**
 * Retention against the real PostgreSQL: rows are back-dated by their ids (time-ordered, and what the
 * cutoffs compare), and the service removes exactly what is older than its days and no longer needed.
 */

let sql: Sql;
const ACCOUNT = 'acc_retention';
const logger = createLogger('warn', 'test');
const service = (batch = { rows: 2, budgetMs: 60_000 }) =>
  createRetentionService({
    repo: createRetentionRepo(sql),
    removeFile: (p) => fs.rm(p, { force: true }),
    logger,
    batch,
  });
const POLICY = { contentDays: 30, eventsDays: 90 };

beforeAll(async () => {
  sql = createSql(await createTestDatabase(), { max: 2 });
  await sql`insert into accounts (id, name) values (${ACCOUNT}, 'retention')`;
});
afterAll(async () => {
  await sql.end();
});

type ContentRow = {
  html: string;
  text_body: string;
  headers: object;
  subject: string;
  to_addresses: string[];
  status: string;
  expired: boolean;
  attachments: number;
};
const content = async (id: string) =>
  (
    await sql<ContentRow[]>`
  select html, text_body, headers, subject, to_addresses, status, content_expired_at is not null as expired,
    (select count(*)::int from attachments where owner_id = ${id}) as attachments
  from emails where id = ${id}`
  )[0]!;

describe('content', () => {
  it('drops the bodies, headers and attachments of emails past the days, keeps young and pending ones, in batches', async () => {
    const old = [1, 2, 3, 4, 5].map((i) => idDaysAgo('email', 30 + i));
    const pendingOld = idDaysAgo('email', 45);
    const young = idDaysAgo('email', 29);
    for (const id of old) await insertEmail(sql, { id, accountId: ACCOUNT });
    await insertEmail(sql, { id: pendingOld, accountId: ACCOUNT, status: 'pending' });
    await insertEmail(sql, { id: young, accountId: ACCOUNT });

    // Two rows per batch: five old emails take three batches, all in one run.
    const run = await service().run({ contentDays: 30, eventsDays: 0 });
    expect(run).toMatchObject({ emailContents: 5, attachments: 5, complete: true });
    for (const id of old) {
      expect(await content(id)).toEqual({
        html: '',
        text_body: '',
        headers: {},
        subject: 'Subject',
        to_addresses: ['rcpt@example.net'],
        status: 'delivered',
        expired: true,
        attachments: 0,
      });
    }
    for (const id of [pendingOld, young])
      expect(await content(id)).toMatchObject({
        html: '<p>html body</p>',
        text_body: 'text body',
        expired: false,
        attachments: 1,
      });

    // Done once: the next run finds nothing (the expired rows are out of the partial index).
    expect((await service().run(POLICY)).emailContents).toBe(0);
  });

  it('keeps everything with days 0, and stops on its time budget (the next run goes on)', async () => {
    const id = idDaysAgo('email', 400);
    await insertEmail(sql, { id, accountId: ACCOUNT });
    expect(await service().run({ contentDays: 0, eventsDays: 0 })).toMatchObject({
      emailContents: 0,
      events: 0,
      complete: true,
    });
    expect((await content(id)).expired).toBe(false);
    expect(await service({ rows: 2, budgetMs: 0 }).run(POLICY)).toMatchObject({ emailContents: 0, complete: false });
    expect((await content(id)).expired).toBe(false);
    expect((await service().run(POLICY)).emailContents).toBe(1);
  });

  it('drops the draft content and attachments of old scheduled emails once sent or cancelled, never of an enqueued one', async () => {
    const draft = {
      from: { name: '', address: 'sender@example.com' },
      to: [],
      subject: 'Later',
      html: '<p>later</p>',
      text: 'later',
      headers: { 'X-A': 'b' },
    };
    const rows = {
      sent: idDaysAgo('scheduled', 40),
      enqueued: idDaysAgo('scheduled', 41),
      young: idDaysAgo('scheduled', 2),
    };
    for (const [status, id] of Object.entries(rows)) {
      await sql`
        insert into scheduled_emails (id, account_id, draft, from_address, to_addresses, subject, scheduled_at, status)
        values (${id}, ${ACCOUNT}, ${sql.json(draft)}, 'sender@example.com', '{}', 'Later', now() + interval '1 day', ${status === 'enqueued' ? 'enqueued' : 'sent'})`;
      await sql`insert into attachments (owner_id, position, filename, content_type, content) values (${id}, 0, 'a', 'text/plain', '\\x00')`;
    }
    expect(await service().run({ contentDays: 30, eventsDays: 0 })).toMatchObject({ scheduledContents: 1 });
    const read = async (id: string) =>
      (
        await sql<{ draft: Record<string, unknown>; n: number }[]>`
      select draft, (select count(*)::int from attachments where owner_id = ${id}) as n from scheduled_emails where id = ${id}`
      )[0]!;
    expect(await read(rows.sent)).toEqual({ draft: { ...draft, html: '', text: '', headers: {} }, n: 0 });
    expect(await read(rows.enqueued)).toEqual({ draft, n: 1 });
    expect(await read(rows.young)).toEqual({ draft, n: 1 });
  });
});

describe('history', () => {
  it('deletes old events with their finished webhook deliveries and attempts; keeps young events and those a pending delivery needs', async () => {
    const webhook = 'wh_retention';
    await sql`insert into webhooks (id, account_id, url, events, secret) values (${webhook}, ${ACCOUNT}, 'https://example.org/h', '{delivery}', 's')`;
    const emailId = idDaysAgo('email', 100);
    await insertEmail(sql, { id: emailId, accountId: ACCOUNT });
    const events = {
      bare: idDaysAgo('event', 95),
      delivered: idDaysAgo('event', 94),
      pending: idDaysAgo('event', 93),
      young: idDaysAgo('event', 89),
    };
    for (const [name, id] of Object.entries(events)) {
      // `delivery` events fan out to the webhook (the trigger of migration 0003); `send` ones do not.
      await sql`insert into events (id, email_id, account_id, type, created_at) values (${id}, ${emailId}, ${ACCOUNT}, ${name === 'bare' ? 'send' : 'delivery'}, now())`;
    }
    await sql`update webhook_deliveries set status = 'succeeded' where event_id in (${events.delivered}, ${events.young})`;
    await sql`
      insert into webhook_attempts (delivery_id, attempt, started_at, status_code, latency_ms)
      select id, 1, now(), 200, 5 from webhook_deliveries`;
    await sql`insert into tracking_windows (email_id, kind, target, last_event_at) values (${emailId}, 'open', '\\x', now())`;

    const run = await service().run({ contentDays: 0, eventsDays: 90 });
    expect(run).toMatchObject({
      events: 2,
      webhookDeliveries: 1,
      webhookAttempts: 1,
      trackingWindows: 1,
      complete: true,
    });
    const left = await sql<{ id: string }[]>`select id from events where email_id = ${emailId} order by id`;
    expect(left.map((r) => r.id)).toEqual([events.pending, events.young]);
    const deliveries = await sql<{ event_id: string; status: string; attempts: number }[]>`
      select event_id, status, (select count(*)::int from webhook_attempts where delivery_id = d.id) as attempts from webhook_deliveries d order by event_id`;
    expect(deliveries).toEqual([
      { event_id: events.pending, status: 'pending', attempts: 1 },
      { event_id: events.young, status: 'succeeded', attempts: 1 },
    ]);
    // The email itself stays (its content is retention's other setting): what remains still answers GET /emails/{id}.
    expect((await content(emailId)).status).toBe('delivered');

    // Once the pending delivery is done (and old enough), the next run takes it and its event.
    await sql`update webhook_deliveries set status = 'discarded' where event_id = ${events.pending}`;
    expect(await service().run({ contentDays: 0, eventsDays: 90 })).toMatchObject({
      events: 1,
      webhookDeliveries: 1,
      webhookAttempts: 1,
    });
  });

  it('deletes caught mail past the days, its file too, and keeps young mail', async () => {
    const dir = path.join(inject('tmpRoot'), `caught-${Date.now()}`);
    await fs.mkdir(dir, { recursive: true });
    const ids = { old: idDaysAgo('caught', 91), young: idDaysAgo('caught', 1) };
    for (const id of Object.values(ids)) {
      const file = path.join(dir, `${id}.eml`);
      await fs.writeFile(file, 'raw');
      await sql`insert into caught_messages (id, envelope_to, size, path, raw) values (${id}, '{a@example.net}', 3, ${file}, '\\x00')`;
    }
    expect(await service().run({ contentDays: 0, eventsDays: 90 })).toMatchObject({ caughtMessages: 1 });
    expect((await sql<{ id: string }[]>`select id from caught_messages`).map((r) => r.id)).toEqual([ids.young]);
    expect((await fs.readdir(dir)).sort()).toEqual([`${ids.young}.eml`]);
  });
});
