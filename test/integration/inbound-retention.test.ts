import { idAt } from '../../src/ids.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRetentionRepo } from '../../src/db/index.js';
import { createSql, type Sql } from '../../src/db/sql.js';
import { createLogger } from '../../src/logger.js';
import { createRetentionService } from '../../src/services/retention-service.js';
import { idDaysAgo } from '../helpers/backdated-rows.js';
import { insertInbound } from '../helpers/inbound-rows.js';
import { createTestDatabase } from '../helpers/stack.js';

/**
 * Retention of inbound mail (issue 26: "retention and GDPR erase cover inbound mail like outbound") against the
 * real PostgreSQL: an inbound email past the content days goes whole (row, stored bytes, its `inbound` event and
 * that event's finished deliveries with their attempts); a young one, or one whose delivery is still pending,
 * stays; bytes no inbound email names are swept an hour after they were written, whatever the policy.
 */
let sql: Sql;
const ACCOUNT = 'acc_inbound_retention';
const logger = createLogger('warn', 'test');
const service = () =>
  createRetentionService({
    repo: createRetentionRepo(sql),
    removeFile: async () => {},
    logger,
    batch: { rows: 2, budgetMs: 60_000 },
  });

beforeAll(async () => {
  sql = createSql(await createTestDatabase(), { max: 2 });
  await sql`insert into accounts (id, name) values (${ACCOUNT}, 'inbound retention')`;
  // Subscribed to inbound: each inbound event gets a delivery (the fan-out trigger), as in service.
  await sql`insert into webhooks (id, account_id, url, events, secret) values ('wh_inret', ${ACCOUNT}, 'https://hooks.example/in', '{inbound}', 'sealed')`;
});
afterAll(async () => {
  await sql.end();
});

const traces = async (id: string) =>
  (
    await sql<{ emails: number; blobs: number; events: number; deliveries: number; attempts: number }[]>`
      select (select count(*)::int from inbound_emails where id = ${id}) as emails,
        (select count(*)::int from inbound_blobs where split_part(key, '/', 1) = ${id}) as blobs,
        (select count(*)::int from events where inbound_id = ${id}) as events,
        (select count(*)::int from webhook_deliveries d join events e on e.id = d.event_id where e.inbound_id = ${id}) as deliveries,
        (select count(*)::int from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
          join events e on e.id = d.event_id where e.inbound_id = ${id}) as attempts`
  )[0]!;

/** Its delivery finished: succeeded after one attempt, as the dispatcher leaves it. */
async function delivered(eventId: string) {
  const [d] = await sql<{ id: string }[]>`
    update webhook_deliveries set status = 'succeeded', completed_at = now() where event_id = ${eventId} returning id`;
  await sql`insert into webhook_attempts (delivery_id, attempt, started_at, status_code, latency_ms) values (${d!.id}, 1, now(), 200, 5)`;
}

const message = (n: number) => ({
  accountId: ACCOUNT,
  raw: Buffer.alloc(2500, n),
  chunkBytes: 1000,
  attachments: [{ filename: 'a.bin', contentType: 'application/octet-stream', bytes: Buffer.alloc(1500, n) }],
});

describe('inbound mail retention', () => {
  it('deletes inbound emails past the content days whole; keeps young ones and those with a pending delivery', async () => {
    const old = [31, 32, 33].map((d) => idDaysAgo('inbound', d));
    for (const [i, id] of old.entries()) {
      const { eventId } = await insertInbound(sql, { ...message(i), id });
      await delivered(eventId);
    }
    const pending = idDaysAgo('inbound', 40);
    await insertInbound(sql, { ...message(9), id: pending });
    const young = idDaysAgo('inbound', 29);
    await delivered((await insertInbound(sql, { ...message(8), id: young })).eventId);
    for (const id of [...old, pending, young])
      expect(await traces(id)).toEqual({
        emails: 1,
        blobs: 5,
        events: 1,
        deliveries: 1,
        attempts: id === pending ? 0 : 1,
      });

    // Two rows a batch: the three old ones take two, in one run; the events' own days do not hold them back.
    const run = await service().run({ contentDays: 30, eventsDays: 0 });
    expect(run).toMatchObject({
      inboundEmails: 3,
      inboundBlobChunks: 15,
      events: 3,
      webhookDeliveries: 3,
      webhookAttempts: 3,
      complete: true,
    });
    for (const id of old)
      expect(await traces(id)).toEqual({ emails: 0, blobs: 0, events: 0, deliveries: 0, attempts: 0 });
    expect(await traces(pending)).toMatchObject({ emails: 1, blobs: 5, events: 1 });
    expect(await traces(young)).toMatchObject({ emails: 1, blobs: 5, events: 1 });

    // Once its delivery is done, the next run takes it.
    await delivered((await sql<{ id: string }[]>`select id from events where inbound_id = ${pending}`)[0]!.id);
    expect(await service().run({ contentDays: 30, eventsDays: 0 })).toMatchObject({ inboundEmails: 1 });
    expect(await traces(pending)).toMatchObject({ emails: 0, blobs: 0, events: 0 });
    // Content kept forever (0 days) keeps inbound mail too.
    expect(await service().run({ contentDays: 0, eventsDays: 0 })).toMatchObject({ inboundEmails: 0 });
    expect(await traces(young)).toMatchObject({ emails: 1 });
  });

  it('sweeps bytes no inbound email names once they are an hour old, whatever the policy', async () => {
    // Keys as the store makes them: the inbound id, time-ordered, minted when the message arrived.
    const minted = { old: idAt('inbound', new Date(Date.now() - 2 * 3_600_000)), new: idAt('inbound', new Date()) };
    const key = (s: 'old' | 'new') => `${minted[s]}orphan${s}/raw`;
    await sql`insert into inbound_blobs (key, seq, data, created_at) values
      (${key('old')}, 0, '\\x01', now() - interval '2 hours'), (${key('old')}, 1, '\\x02', now() - interval '2 hours'),
      (${key('new')}, 0, '\\x03', now())`;
    const run = await service().run({ contentDays: 0, eventsDays: 0 });
    expect(run).toMatchObject({ inboundBlobChunks: 2, complete: true });
    const left = await sql<{ key: string }[]>`select key from inbound_blobs where key like '%orphan%'`;
    expect(left.map((r) => r.key)).toEqual([key('new')]);
  });
});
