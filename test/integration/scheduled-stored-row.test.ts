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
