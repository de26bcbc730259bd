import { describe, expect, it } from 'vitest';
import { useMigrationDatabase } from '../helpers/migration-database.js';

/**
 * Migration 17 converts addresses stored as written into the one canonical form (local part as written,
 * domain in ASCII): rows accepted before it must then be suppressed, reported and erased as the rows after it.
 */

const db = useMigrationDatabase();
const box = (address: string, boxName = '') => ({ name: boxName, address });

describe('migration 17: canonical addresses', () => {
  it('converts emails, scheduled drafts, events, suppressions and allowed domains; leaves canonical rows alone', async () => {
    const sql = await db.upTo(17);

    await sql`insert into accounts (id, name, daily_quota) values ('acc_1', 'a', 100)`;
    const mailboxes = {
      from: box('Zoe@Bücher.de', 'Zoë'),
      to: [box('bob@ｃustomers.test'), box('ann@example.net')],
      cc: [box('cc@cus\u00ADtomers.test')],
      bcc: [],
      replyTo: [box('help@例え.jp')],
    };
    await sql`insert into emails (id, account_id, job_type, job_id, from_address, to_addresses, cc_addresses, bcc_addresses, reply_to, subject,
        size_bytes, header_message_id, mailboxes, sender_domain, remaining_recipients)
      values ('em_1', 'acc_1', 'direct', 'em_1', 'Zoe@Bücher.de', ${['bob@ｃustomers.test', 'ann@example.net']}, ${['cc@cus\u00ADtomers.test']}, '{}',
        ${['help@例え.jp']}, 's', 1, '<em_1@xn--bcher-kva.de>', ${sql.json(mailboxes)}, 'xn--bcher-kva.de', ${['bob@ｃustomers.test']}),
      ('em_2', 'acc_1', 'direct', 'em_2', 'plain@example.com', ${['x@example.net']}, '{}', '{}', '{}', 's', 1, '<em_2@example.com>',
        ${sql.json({ from: box('plain@example.com'), to: [box('x@example.net')], cc: [], bcc: [], replyTo: [] })}, 'example.com', null)`;
    const draft = {
      from: box('ops@Bücher.de'),
      to: [box('rick@bücher.de', 'Rick')],
      cc: [],
      bcc: [],
      replyTo: [],
      subject: 's',
      senderDomain: 'xn--bcher-kva.de',
    };
    await sql`insert into scheduled_emails (id, account_id, draft, from_address, to_addresses, subject, scheduled_at)
      values ('sch_1', 'acc_1', ${sql.json(draft)}, 'ops@Bücher.de', ${['rick@bücher.de']}, 's', now() + interval '1 hour')`;
    const bounce = {
      bounce_type: 'Permanent',
      bounced_recipients: [
        { email_address: 'bob@ｃustomers.test', diagnostic_code: '550 5.1.1 <Bob@Example.COM> unknown' },
      ],
    };
    await sql`insert into events (id, email_id, account_id, type, data) values ('ev_1', 'em_1', 'acc_1', 'bounce', ${sql.json(bounce)})`;
    await sql`insert into suppressions (id, account_id, address, reason, email_id) values
      ('sup_1', 'acc_1', 'bob@bücher.de', 'bounce', 'em_1'), ('sup_2', 'acc_1', 'bob@xn--bcher-kva.de', 'complaint', 'em_1'),
      ('sup_3', 'acc_1', 'victim@ｃustomers.test', 'bounce', 'em_1'), ('sup_4', 'acc_1', 'sha256:abc', 'bounce', 'em_1')`;
    await sql`insert into api_keys (id, account_id, name, key_hash, key_prefix, permission, allowed_domains)
      values ('key_1', 'acc_1', 'k', '\\x00', 'p', 'all', ${['bücher.de', 'example.com']})`;

    await db.apply(17);

    const [email] = await sql`select * from emails where id = 'em_1'`;
    expect(email!.mailboxes).toEqual({
      from: box('Zoe@xn--bcher-kva.de', 'Zoë'),
      to: [box('bob@customers.test'), box('ann@example.net')],
      cc: [box('cc@customers.test')],
      bcc: [],
      replyTo: [box('help@xn--r8jz45g.jp')],
    });
    expect([
      email!.from_address,
      email!.to_addresses,
      email!.cc_addresses,
      email!.reply_to,
      email!.remaining_recipients,
    ]).toEqual([
      'Zoe@xn--bcher-kva.de',
      ['bob@customers.test', 'ann@example.net'],
      ['cc@customers.test'],
      ['help@xn--r8jz45g.jp'],
      ['bob@customers.test'],
    ]);
    const [plain] = await sql`select mailboxes from emails where id = 'em_2'`;
    expect(plain!.mailboxes.from).toEqual(box('plain@example.com'));

    const [scheduled] = await sql`select draft, from_address, to_addresses from scheduled_emails where id = 'sch_1'`;
    expect(scheduled!.draft).toMatchObject({
      from: box('ops@xn--bcher-kva.de'),
      to: [box('rick@xn--bcher-kva.de', 'Rick')],
      subject: 's',
    });
    expect([scheduled!.from_address, scheduled!.to_addresses]).toEqual([
      'ops@xn--bcher-kva.de',
      ['rick@xn--bcher-kva.de'],
    ]);

    const [ev] = await sql`select data from events where id = 'ev_1'`;
    // The address converted; the server's own words, quoted in the diagnostic, as they were.
    expect(ev!.data.bounced_recipients).toEqual([
      { email_address: 'bob@customers.test', diagnostic_code: '550 5.1.1 <Bob@Example.COM> unknown' },
    ]);

    const supp = await sql<{ id: string; address: string }[]>`select id, address from suppressions order by id`;
    expect(supp).toEqual([
      { id: 'sup_2', address: 'bob@xn--bcher-kva.de' },
      { id: 'sup_3', address: 'victim@customers.test' },
      { id: 'sup_4', address: 'sha256:abc' },
    ]);
    const [key] = await sql`select allowed_domains from api_keys where id = 'key_1'`;
    expect(key!.allowed_domains).toEqual(['xn--bcher-kva.de', 'example.com']);
  });
});
