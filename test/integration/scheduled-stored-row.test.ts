import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmailsRepo } from '../../src/db/index.js';
import { createScheduledRepo } from '../../src/db/index.js';
import { createSql, type Sql } from '../../src/db/sql.js';
import { validateDraft } from '../../src/domain/email-draft.js';
import { createTestDatabase } from '../helpers/stack.js';

const ACCOUNT = 'acc_firing';

const draft = validateDraft({
  from: 'Ann <ann@Example.COM>',
  to: ['bob@example.org', 'Cy <cy@example.org>'],
  cc: ['dee@example.org'],
  bcc: ['eve@example.org'],
  replyTo: ['help@example.com'],
  subject: 'Hello',
  html: '<p>hi</p>',
  text: 'hi',
  attachments: [
    { filename: 'a.txt', content: Buffer.from('one').toString('base64'), contentType: 'text/plain' },
    {
      filename: 'logo.png',
      content: Buffer.from('png').toString('base64'),
      contentType: 'image/png',
      contentId: 'logo',
    },
  ],
  headers: { 'X-Zeta': 'z', 'X-Alpha': 'a' },
  tags: { campaign: 'spring' },
  stream: '',
  topic: '',
});

let sql: Sql;

beforeAll(async () => {
  sql = createSql(await createTestDatabase(), { max: 2 });
  await sql`insert into accounts (id, name) values (${ACCOUNT}, 'firing')`;
});
afterAll(async () => {
  await sql?.end();
});

/** Every column an email is created with, apart from those that tell two emails apart. */
async function stored(id: string) {
  const [row] = await sql<Record<string, unknown>[]>`select * from emails where id = ${id}`;
  const { id: _id, job_type: _type, job_id: _job, header_message_id: _mid, created_at: _at, ...rest } = row!;
  return rest;
}

describe('a fired scheduled email', () => {
  it('is stored as the same draft sent directly is, with its attachments, its Message-ID and its place in the queue', async () => {
    const scheduled = createScheduledRepo(sql);
    await scheduled.create({
      id: 'sch_same',
      accountId: ACCOUNT,
      apiKeyId: 'key_1',
      draft,
      scheduledAt: new Date(Date.now() - 1000),
    });
    await createEmailsRepo(sql).accept(
      [{ id: 'em_direct', accountId: ACCOUNT, apiKeyId: 'key_1', jobType: 'direct', jobId: '', draft }],
      { enqueue: true },
    );

    expect(await scheduled.fireDue(new Date(0), new Date(Date.now() + 60_000), () => 'em_fired')).toEqual(['em_fired']);

    expect(await stored('em_fired')).toEqual(await stored('em_direct'));
    const [fired] = await sql`select job_type, job_id, header_message_id from emails where id = 'em_fired'`;
    expect(fired).toEqual({ job_type: 'scheduled', job_id: 'sch_same', header_message_id: '<em_fired@example.com>' });
    const files =
      await sql`select filename, content, content_id from attachments where owner_id = 'em_fired' order by position`;
    expect(files.map((f) => [f.filename, Buffer.from(f.content as Buffer).toString(), f.content_id])).toEqual([
      ['a.txt', 'one', null],
      ['logo.png', 'png', 'logo'],
    ]);
    expect((await createEmailsRepo(sql).attachments('em_fired')).map((a) => a.contentId)).toEqual(['', 'logo']);
    expect(await sql`select email_id from delivery_queue where email_id = 'em_fired'`).toHaveLength(1);
  });

  it("keeps a broadcast draft's stream and topic, and makes a draft stored before streams transactional", async () => {
    const scheduled = createScheduledRepo(sql);
    const broadcast = validateDraft({
      ...{ from: 'ann@example.com', to: ['bob@example.org'], cc: [], bcc: [], replyTo: [] },
      ...{ subject: 'News', html: '', text: 'hi', attachments: [], headers: {}, tags: {} },
      stream: 'broadcast',
      topic: 'weekly.news',
    });
    for (const id of ['sch_broadcast', 'sch_before_streams'])
      await scheduled.create({
        id,
        accountId: ACCOUNT,
        apiKeyId: 'key_1',
        draft: broadcast,
        scheduledAt: new Date(Date.now() - 1000),
      });
    // A draft stored before migration 25 has neither field.
    await sql`update scheduled_emails set draft = draft - 'stream' - 'topic' where id = 'sch_before_streams'`;

    const fired = await scheduled.fireDue(new Date(0), new Date(Date.now() + 60_000), (id) => `em_${id}`);
    expect(fired.sort()).toEqual(['em_sch_before_streams', 'em_sch_broadcast']);
    const rows = await sql`select id, stream, topic from emails where id = any(${fired}) order by id`;
    expect(rows.map((r) => [r.id, r.stream, r.topic])).toEqual([
      ['em_sch_before_streams', 'transactional', null],
      ['em_sch_broadcast', 'broadcast', 'weekly.news'],
    ]);
    expect(await createEmailsRepo(sql).get(ACCOUNT, 'em_sch_broadcast')).toMatchObject({
      stream: 'broadcast',
      topic: 'weekly.news',
    });
  });

  it('fires once, and a cancelled one not at all', async () => {
    const scheduled = createScheduledRepo(sql);
    await scheduled.create({
      id: 'sch_cancelled',
      accountId: ACCOUNT,
      apiKeyId: 'key_1',
      draft,
      scheduledAt: new Date(Date.now() - 1000),
    });
    expect(await scheduled.cancel(ACCOUNT, 'sch_cancelled')).toBe('cancelled');
    expect(await scheduled.fireDue(new Date(0), new Date(Date.now() + 60_000), () => 'em_never')).toEqual([]);
    expect(await sql`select id from emails where id = 'em_never' or job_id = 'sch_cancelled'`).toHaveLength(0);
  });
});
