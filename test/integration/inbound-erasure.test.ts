import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSql, type Sql } from '../../src/db/sql.js';
import { newId } from '../../src/ids.js';
import { admin, createSender } from '../helpers/admin-fixtures.js';
import { insertEmail } from '../helpers/backdated-rows.js';
import { call } from '../helpers/http.js';
import { insertInbound } from '../helpers/inbound-rows.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * GDPR erasure of inbound mail (issue 26) through the management API: erasing an address deletes the inbound mail
 * it sent or received (From, the envelope, To, Cc), whole, in the account named or in all, and the `reply` events
 * it made lose the address; erasing one email leaves the replies it received (other people's messages).
 */
const stack = useStack();
let sql: Sql;
beforeAll(() => {
  sql = createSql(stack.databaseUrl, { max: 2 });
});
afterAll(async () => {
  await sql?.end();
});

const left = async (id: string) =>
  (
    await sql<{ emails: number; blobs: number; events: number }[]>`
      select (select count(*)::int from inbound_emails where id = ${id}) as emails,
        (select count(*)::int from inbound_blobs where split_part(key, '/', 1) = ${id}) as blobs,
        (select count(*)::int from events where inbound_id = ${id}) as events`
  )[0]!;

const raw = (from: string) => Buffer.from(`From: ${from}\r\nSubject: hi\r\n\r\nhello\r\n`);

describe('erasing a recipient', () => {
  it('deletes inbound mail from or to the address, whole, in the account named, then everywhere; its reply events lose the address', async () => {
    const a = await createSender(stack, 'inbound-erase-a', 'inbound-erase-a.example');
    const b = await createSender(stack, 'inbound-erase-b', 'inbound-erase-b.example');
    const answered = newId('email');
    await insertEmail(sql, { id: answered, accountId: a.accountId, to: ['gone@example.net'] });
    const from = await insertInbound(sql, {
      accountId: a.accountId,
      raw: raw('gone@example.net'),
      from: 'gone@example.net',
      replyToEmailId: answered,
      attachments: [{ filename: 'cv.pdf', contentType: 'application/pdf', bytes: Buffer.from('%PDF-1.4') }],
    });
    const cc = await insertInbound(sql, {
      accountId: a.accountId,
      raw: raw('other@example.net'),
      from: 'other@example.net',
      cc: ['Gone@Example.NET'],
    });
    const unrelated = await insertInbound(sql, {
      accountId: a.accountId,
      raw: raw('other@example.net'),
      from: 'other@example.net',
    });
    const elsewhere = await insertInbound(sql, {
      accountId: b.accountId,
      raw: raw('gone@example.net'),
      from: 'gone@example.net',
    });

    const erased = await admin(stack, 'POST', '/recipients/erase', {
      address: 'GONE@example.net',
      account_id: a.accountId,
    });
    expect(erased.body).toMatchObject({ inbound_emails: 2, skipped_pending: 0 });
    // Two inbound events deleted, one reply event rewritten (and the answered email's own traces).
    expect(erased.body.events).toBeGreaterThanOrEqual(3);
    expect(await left(from.id)).toEqual({ emails: 0, blobs: 0, events: 0 });
    expect(await left(cc.id)).toEqual({ emails: 0, blobs: 0, events: 0 });
    expect(await left(unrelated.id)).toEqual({ emails: 1, blobs: 1, events: 1 });
    expect(await left(elsewhere.id)).toEqual({ emails: 1, blobs: 1, events: 1 });
    expect((await call('GET', `${stack.api}/inbound/emails/${from.id}`, { token: a.key })).status).toBe(404);
    const replies = await sql<
      { data: object }[]
    >`select data from events where email_id = ${answered} and type = 'reply'`;
    expect(replies.map((r) => r.data)).toEqual([{ inbound_id: from.id, from: 'erased@erased.invalid' }]);

    const everywhere = await admin(stack, 'POST', '/recipients/erase', { address: 'gone@example.net' });
    expect(everywhere.body).toMatchObject({ inbound_emails: 1 });
    expect(await left(elsewhere.id)).toEqual({ emails: 0, blobs: 0, events: 0 });
    expect(await left(unrelated.id)).toMatchObject({ emails: 1 });
  });
});

describe('erasing an email', () => {
  it('leaves the replies it received: they are their senders’ messages (erase the sender to remove them)', async () => {
    const s = await createSender(stack, 'inbound-erase-email', 'inbound-erase-email.example');
    const emailId = newId('email');
    await insertEmail(sql, { id: emailId, accountId: s.accountId });
    const reply = await insertInbound(sql, {
      accountId: s.accountId,
      raw: raw('rcpt@example.net'),
      from: 'rcpt@example.net',
      replyToEmailId: emailId,
    });
    await admin(stack, 'POST', `/emails/${emailId}/erase`, {});
    const kept = await call('GET', `${stack.api}/inbound/emails/${reply.id}`, { token: s.key });
    expect(kept.status).toBe(200);
    expect(kept.body).toMatchObject({ reply_to_email_id: emailId, text: 'Hi there' });
    expect(await left(reply.id)).toEqual({ emails: 1, blobs: 1, events: 1 });
  });
});
