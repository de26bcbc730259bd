import { describe, expect, it } from 'vitest';
import { useMigrationDatabase } from '../helpers/migration-database.js';

/**
 * Migration 4 turns the address text stored by earlier versions into parsed mailboxes: rows written before
 * it must read back with the same names and addresses, and scheduled drafts still fire from their mailboxes.
 */

const db = useMigrationDatabase();

describe('migration 4: parsed mailboxes', () => {
  it('converts emails and scheduled drafts written as text', async () => {
    const sql = await db.upTo(4);

    await sql`insert into accounts (id, name, daily_quota) values ('acc_1', 'a', 100)`;
    await sql`insert into emails (id, account_id, job_type, from_address, to_addresses, cc_addresses, bcc_addresses, reply_to, subject, size_bytes, header_message_id)
      values ('em_1', 'acc_1', 'direct', 'Support Team <Support@Example.COM>', ${['"Doe, John" <john@example.net>', 'jane@example.net']},
        ${['<ann@example.net>']}, ${['hidden@example.net']}, ${['Help <help@example.com>']}, 's', 1, '<em_1@example.com>')`;
    const draft = {
      from: '"Ops, Team" <ops@example.com>',
      to: ['rick@example.net'],
      cc: [],
      bcc: [],
      replyTo: [],
      subject: 's',
      senderDomain: 'example.com',
    };
    await sql`insert into scheduled_emails (id, account_id, draft, from_address, to_addresses, subject, scheduled_at)
      values ('sch_1', 'acc_1', ${sql.json(draft)}, ${draft.from}, ${draft.to}, 's', now() + interval '1 hour')`;

    await db.apply(4);

    const [email] =
      await sql`select mailboxes, sender_domain, from_address, to_addresses, cc_addresses, bcc_addresses, reply_to from emails where id = 'em_1'`;
    expect(email!.mailboxes).toEqual({
      from: { name: 'Support Team', address: 'Support@Example.COM' },
      to: [
        { name: 'Doe, John', address: 'john@example.net' },
        { name: '', address: 'jane@example.net' },
      ],
      cc: [{ name: '', address: 'ann@example.net' }],
      bcc: [{ name: '', address: 'hidden@example.net' }],
      replyTo: [{ name: 'Help', address: 'help@example.com' }],
    });
    expect(email!.sender_domain).toBe('example.com');
    expect(email!.from_address).toBe('Support@Example.COM');
    expect(email!.to_addresses).toEqual(['john@example.net', 'jane@example.net']);
    expect(email!.cc_addresses).toEqual(['ann@example.net']);
    expect(email!.reply_to).toEqual(['help@example.com']);

    const [scheduled] = await sql`select draft, from_address, to_addresses from scheduled_emails where id = 'sch_1'`;
    expect(scheduled!.draft.from).toEqual({ name: 'Ops, Team', address: 'ops@example.com' });
    expect(scheduled!.draft.to).toEqual([{ name: '', address: 'rick@example.net' }]);
    expect(scheduled!.draft.senderDomain).toBe('example.com');
    expect(scheduled!.from_address).toBe('ops@example.com');
  });
});
