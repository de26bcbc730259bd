import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/ids.js';
import { admin } from '../helpers/admin-fixtures.js';
import { useCli } from '../helpers/use-cli.js';

/**
 * `mailer accounts stats` as an operator runs it: `bin/run.js` in a child process against the real service with
 * the admin token, over mail written into the database as delivery records it (docs/api.md "Stats").
 */
const cli = useCli();
const { stack, mailer, json, ok } = cli;
let db: postgres.Sql | undefined;
afterAll(async () => {
  await db?.end();
});

/** Three recipients at outlook.com (two delivered, one bounced with the server's reply) and one at gmail.com. */
async function seed(accountId: string): Promise<void> {
  db ??= postgres(stack.databaseUrl, { max: 1, onnotice: () => {} });
  const sql = db;
  const email = async (to: string[]) => {
    const id = newId('email');
    const mailboxes = { from: { name: '', address: 'n@cli.test' }, to: to.map((address) => ({ name: '', address })) };
    await sql`
      insert into emails (id, account_id, job_type, from_address, to_addresses, subject, tags, size_bytes, status,
        header_message_id, mailboxes, sender_domain)
      values (${id}, ${accountId}, 'direct', 'n@cli.test', ${to}, 'Stats', ${sql.json({ kind: 'receipt' })}, 100,
        'delivered', ${`<${id}@cli.test>`}, ${sql.json({ ...mailboxes, cc: [], bcc: [], replyTo: [] })}, 'cli.test')`;
    return id;
  };
  const event = (emailId: string, type: string, data: Record<string, unknown> = {}) =>
    sql`insert into events (id, email_id, account_id, type, data)
      values (${newId('event')}, ${emailId}, ${accountId}, ${type}, ${sql.json(data as never)})`;
  const o = await email(['a@outlook.com', 'b@outlook.com', 'c@outlook.com']);
  await event(o, 'send');
  await event(o, 'delivery', { recipients: ['a@outlook.com', 'b@outlook.com'], smtp_response: '250 ok' });
  await event(o, 'bounce', {
    bounce_type: 'Permanent',
    bounce_subtype: 'General',
    bounced_recipients: [
      { email_address: 'c@outlook.com', status: '5.1.1', diagnostic_code: '550 5.1.1 c@outlook.com unknown' },
    ],
  });
  const g = await email(['d@gmail.com']);
  await event(g, 'send');
  await event(g, 'delivery', { recipients: ['d@gmail.com'], smtp_response: '250 ok' });
}

describe('accounts stats', () => {
  it('prints the groups with their rates and replies, --json as the management API answers', async () => {
    await seed(stack.accountId);
    const byDomain = await ok(['accounts', 'stats', stack.accountId, '--group-by', 'recipient_domain']);
    const lines = byDomain.stdout.split('\n');
    expect(lines[0]).toMatch(
      /^\d{4}-\d\d-\d\dT00:00:00\.000Z to \d{4}-\d\d-\d\dT00:00:00\.000Z \(UTC\), by recipient_domain$/,
    );
    expect(lines[1]).toMatch(/^RECIPIENT_DOMAIN\s+ACCEPTED\s+DELIVERED\s+BOUNCED\s+DEFERRED/);
    expect(lines.find((l) => l.startsWith('outlook.com'))?.split(/\s{2,}/)).toEqual([
      'outlook.com',
      '3',
      '2 (66.67 %)',
      '1 (33.33 %)',
      '0 (0.00 %)',
      '0',
      '0',
      '0',
      '0',
    ]);
    expect(byDomain.stdout).toContain('Recent replies:\noutlook.com:\n  550 5.1.1 <address> unknown');

    const asJson = await json<Record<string, unknown>>([
      'accounts',
      'stats',
      stack.accountId,
      '--group-by',
      'tag',
      '--json',
    ]);
    const rest = await admin(stack, 'GET', `/accounts/${stack.accountId}/stats/grouped?group_by=tag`);
    expect(asJson).toEqual(rest.body);
    expect(asJson.stats).toEqual([
      expect.objectContaining({ key: 'kind=receipt', accepted: 4, delivered: 3, bounced: 1 }),
    ]);

    const days = await ok(['accounts', 'stats', stack.accountId, '--from', '2026-01-01', '--to', '2026-01-03']);
    expect(days.stdout.split('\n').filter((l) => /^2026-01-0\d\s/.test(l))).toHaveLength(3);
  });

  it('refuses a bad grouping before calling, and shows the API refusing a bad range', async () => {
    const usage = await mailer(['accounts', 'stats', stack.accountId, '--group-by', 'week']);
    expect(usage.code).toBe(2);
    const range = await mailer(['accounts', 'stats', stack.accountId, '--from', '2026-01-01', '--to', '2026-06-01']);
    expect(range.code).toBe(1);
    expect(range.stderr).toMatch(/^validation error: from: the range .* is over 90 days/);
    const missing = await mailer(['accounts', 'stats', 'acc_nobody']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^not found: account acc_nobody not found/);
  });
});
