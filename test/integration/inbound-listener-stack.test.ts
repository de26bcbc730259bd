import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, eventually, validEmail } from '../helpers/http.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * The inbound listener as the service runs it (start-api-role.ts): the routes' resolver, the parser, mailauth and
 * the store wired together, a message read back through the API.
 */
describe('the inbound MX as the service runs it', () => {
  const stack = useStack();

  beforeAll(async () => {
    const sql = stack.mailer.sql;
    await sql`insert into domains (id, account_id, name, verification_token, verified_at)
      values ('dom_01jbq7m3k2x9f5v8r4t6w0ys00', ${stack.accountId}, 'stack.test', 't', now())`;
    await sql`insert into inbound_routes (id, account_id, domain_id, local_part, domain)
      values ('rt_01jbq7m3k2x9f5v8r4t6w0ys01', ${stack.accountId}, 'dom_01jbq7m3k2x9f5v8r4t6w0ys00', 'help', 'stack.test')`;
  });

  const deliver = async (mail: Mail.Options) => {
    const transport = nodemailer.createTransport({
      url: stack.mailer.inboundUrl,
      requireTLS: true,
      tls: { rejectUnauthorized: false },
    });
    try {
      return (await transport.sendMail(mail)).response;
    } finally {
      transport.close();
    }
  };

  it('takes a reply to an email the account sent: the inbound email, its attachment and the reply event', async () => {
    const sent = await call('POST', `${stack.api}/emails`, { token: stack.apiKey, body: validEmail() });
    expect(sent.status).toBe(200);
    const emailId = sent.body.id as string;
    const [email] = await stack.mailer.sql<{ header_message_id: string }[]>`
      select header_message_id from emails where id = ${emailId}`;
    expect(
      await deliver({
        from: 'Rcpt <rcpt@example.net>',
        to: 'help+case-7@stack.test',
        subject: 'Re: Hello',
        inReplyTo: email!.header_message_id,
        text: 'Thanks!\n\nOn Mon, 23 Nov 2026 at 10:00, Sender <sender@example.com> wrote:\n> Hello there\n',
        attachments: [{ filename: 'note.txt', content: 'a note' }],
      }),
    ).toMatch(/^250 /);
    const [row] = await stack.mailer.sql<{ id: string }[]>`
      select id from inbound_emails where envelope_to = 'help+case-7@stack.test'`;
    const got = await call('GET', `${stack.api}/inbound/emails/${row!.id}`, { token: stack.apiKey });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      id: row!.id,
      route_id: 'rt_01jbq7m3k2x9f5v8r4t6w0ys01',
      from: 'rcpt@example.net',
      from_name: 'Rcpt',
      subject: 'Re: Hello',
      mailbox_hash: 'case-7',
      in_reply_to: email!.header_message_id,
      reply_to_email_id: emailId,
      attachments: [{ filename: 'note.txt', content_type: 'text/plain', size: 6, content_id: null }],
    });
    expect(got.body.stripped_text).toBe('Thanks!');
    expect(Object.keys(got.body.authentication as object).sort()).toEqual(['dkim', 'dmarc', 'spf']);
    expect((got.body.authentication as { dkim: string }).dkim).toBe('none');
    const attachment = await fetch(`${stack.api}/inbound/emails/${row!.id}/attachments/0`, {
      headers: { authorization: `Bearer ${stack.apiKey}` },
    });
    expect(await attachment.text()).toBe('a note');
    const events = await eventually(async () => {
      const rows = await stack.mailer.sql<{ type: string; data: Record<string, unknown> }[]>`
        select type, data from events where email_id = ${emailId} and type = 'reply'`;
      return rows.length > 0 ? rows : undefined;
    });
    expect(events).toEqual([{ type: 'reply', data: { inbound_id: row!.id, from: 'rcpt@example.net' } }]);
  });

  it('refuses an address no route takes at a routed domain, 550 5.1.1', async () => {
    await expect(
      deliver({ from: 'x@example.net', to: 'nobody@stack.test', subject: 'x', text: 'x' }),
    ).rejects.toMatchObject({ responseCode: 550, response: expect.stringMatching(/^550 5\.1\.1 /) });
  });
});
