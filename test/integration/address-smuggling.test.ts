import { describe, expect, it } from 'vitest';
import { call, eventually, validEmail, type JsonResponse } from '../helpers/http.js';
import type { SinkMessage } from '../helpers/smtp-sink.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { useStack } from '../helpers/use-stack.js';
import { returnPathPattern } from '../helpers/return-path.js';

/**
 * An address field is read once, and that reading is what is judged, stored and sent: a display name cannot
 * hide a second address from the sender-domain check, the recipient limit or suppression, and what reaches
 * the receiving server (envelope and headers) is exactly the mailboxes the API answered.
 */

const stack = useStack({ MAILER_RATE_LIMIT: '10000' });

const send = (body: unknown) => call('POST', `${stack.api}/emails`, { token: stack.apiKey, body });
const schedule = (body: unknown) => call('POST', `${stack.api}/emails/schedule`, { token: stack.apiKey, body });
const batch = (emails: unknown[]) =>
  call('POST', `${stack.api}/emails/batch`, { token: stack.apiKey, body: { emails } });

function expect400(res: JsonResponse, field: string, problem: RegExp): void {
  expect(res.status, res.text.slice(0, 300)).toBe(400);
  expect(res.body.error).toBe('validation error');
  expect(res.body.message).toContain(`${field}:`);
  expect(res.body.message).toMatch(problem);
}

async function arrived(id: string): Promise<SinkMessage> {
  return eventually(async () => stack.sink.messages.find((m) => m.messageId.startsWith(`<${id}@`)));
}

const LIST = /several addresses/;
const GROUP = /is a group/;

describe('one mailbox per entry, in every address field', () => {
  it('a From line hiding a second address is refused, not sent from the hidden one', async () => {
    const before = stack.sink.messages.length;
    expect400(await send(validEmail({ from: 'ceo@bank.example, Support <sender@example.com>' })), 'from', LIST);
    expect400(await send(validEmail({ from: 'ceo@bank.example; sender@example.com' })), 'from', LIST);
    expect400(await send(validEmail({ from: 'Staff: ceo@bank.example, sender@example.com;' })), 'from', GROUP);
    await new Promise((r) => setTimeout(r, 300));
    expect(stack.sink.messages.length).toBe(before);
  });

  it.each([
    ['to', { to: ['ok@example.net', 'a@x.example, b@y.example, Bob <bob@z.example>'] }, 'to[1]', LIST],
    ['cc', { cc: ['a@x.example, b@y.example'] }, 'cc[0]', LIST],
    ['bcc', { bcc: ['ok@example.net', 'ok2@example.net', 'Undisclosed: a@x.example, b@y.example;'] }, 'bcc[2]', GROUP],
    ['reply_to', { reply_to: ['a@x.example,b@y.example'] }, 'reply_to[0]', LIST],
  ] as const)(
    '%s: a list or group inside one entry is a 400 naming the entry',
    async (_name, fields, field, problem) => {
      expect400(await send(validEmail(fields)), field, problem);
    },
  );

  it('the same rule holds for scheduled and batch sends (prefixed in a batch)', async () => {
    const at = new Date(Date.now() + 3_600_000).toISOString();
    expect400(await schedule(validEmail({ to: ['a@x.example, b@y.example'], scheduled_at: at })), 'to[0]', LIST);
    expect400(await batch([validEmail(), validEmail({ cc: ['G: a@x.example;'] })]), 'emails[1].cc[0]', GROUP);
  });

  it('50 entries that each hide two addresses cannot reach 100 recipients', async () => {
    const to = Array.from({ length: 50 }, (_, i) => `a${i}@example.net, b${i}@example.net`);
    expect400(await send(validEmail({ to })), 'to[0]', LIST);
  });

  it('reply_to is bounded in count', async () => {
    const replyTo = Array.from({ length: 11 }, (_, i) => `r${i}@example.net`);
    const res = await send(validEmail({ reply_to: replyTo }));
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/reply_to: 11 addresses exceed the maximum of 10/);
  });

  it('attachment content_type is bounded in length', async () => {
    const contentType = `application/${'x'.repeat(250)}`;
    const res = await send(
      validEmail({ attachments: [{ filename: 'a.bin', content: 'aGk=', content_type: contentType }] }),
    );
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/attachments\[0\]\.content_type: length 262 exceeds the maximum of 255/);
  });
});

describe('what is sent is what was parsed', () => {
  it('quoted names with commas stay valid; envelope and headers carry exactly the parsed mailboxes', async () => {
    const res = await send(
      validEmail({
        from: '"Support, Example" <sender@example.com>',
        to: ['"Doe, John" <john@example.net>', 'Jane <jane@example.net>'],
        cc: ['"Lee, Ann" <ann@example.net>'],
        bcc: ['hidden@example.net'],
        reply_to: ['"Help, Desk" <help@example.com>'],
      }),
    );
    expect(res.status, res.text).toBe(200);
    const id = res.body.id as string;
    // The envelopes are set from the parse: to + cc + bcc, a copy each under its own return path, nothing else.
    const copies = await eventually(async () => {
      const found = stack.sink.messages.filter((x) => x.parsed.headers.get('x-mail-email-id') === id);
      return found.length >= 4 ? found : undefined;
    });
    ['john@example.net', 'jane@example.net', 'ann@example.net', 'hidden@example.net'].forEach((recipient, i) => {
      expect(copies.find((x) => x.envelopeTo.join() === recipient)?.envelopeFrom).toMatch(
        returnPathPattern(id, 'example.com', i),
      );
    });
    expect(copies.flatMap((x) => x.envelopeTo).sort()).toEqual([
      'ann@example.net',
      'hidden@example.net',
      'jane@example.net',
      'john@example.net',
    ]);
    const m = copies[0]!;
    // The headers are built from the parsed parts: one mailbox each, names intact, Bcc absent.
    expect(m.parsed.from?.value).toEqual([{ name: 'Support, Example', address: 'sender@example.com' }]);
    const to = Array.isArray(m.parsed.to) ? m.parsed.to : [m.parsed.to!];
    expect(to.flatMap((a) => a.value)).toEqual([
      { name: 'Doe, John', address: 'john@example.net' },
      { name: 'Jane', address: 'jane@example.net' },
    ]);
    expect(m.parsed.replyTo?.value).toEqual([{ name: 'Help, Desk', address: 'help@example.com' }]);
    expect(m.raw.toString('utf8')).not.toMatch(/^bcc:/im);

    // The API answers the same mailboxes it sent.
    const got = await call('GET', `${stack.api}/emails/${id}`, { token: stack.apiKey });
    expect(got.body.from).toBe('"Support, Example" <sender@example.com>');
    expect(got.body.to).toEqual(['"Doe, John" <john@example.net>', 'Jane <jane@example.net>']);
    expect(got.body.bcc).toEqual(['hidden@example.net']);
  });

  it('suppression is judged on the parsed address, whatever name surrounds it', async () => {
    // Suppress an address through the real path: a recipient the sink refuses permanently.
    stack.sink.refuseRecipient = (a) => (a === 'gone@example.net' ? '550 5.1.1 no such user' : undefined);
    const first = await send(validEmail({ to: ['gone@example.net'] }));
    await eventually(async () => {
      const r = await call('GET', `${stack.api}/emails/${first.body.id as string}`, { token: stack.apiKey });
      return r.body.status === 'bounced';
    });
    stack.sink.refuseRecipient = () => undefined;

    const res = await send(validEmail({ to: ['"Someone, Else" <Gone@Example.NET>', 'kept@example.net'] }));
    expect(res.status).toBe(200);
    const m = await arrived(res.body.id as string);
    expect(m.envelopeTo).toEqual(['kept@example.net']);
  });

  it('a scheduled email is sent from the mailboxes parsed when it was scheduled', async () => {
    const at = new Date(Date.now() + 1500).toISOString();
    const res = await schedule(
      validEmail({
        from: '"Ops, Team" <sender@example.com>',
        to: ['"Roe, Rick" <rick@example.net>'],
        scheduled_at: at,
      }),
    );
    expect(res.status, res.text).toBe(200);
    const listed = await call('GET', `${stack.api}/emails/scheduled/${res.body.id as string}`, { token: stack.apiKey });
    expect(listed.body.from).toBe('"Ops, Team" <sender@example.com>');
    const m = await eventually(
      async () => stack.sink.messages.find((x) => x.envelopeTo.includes('rick@example.net')),
      30_000,
    );
    expect(m.envelopeFrom).toMatch(returnPathPattern(/em_[0-9a-z]{26}/, 'example.com'));
    expect(m.parsed.from?.value).toEqual([{ name: 'Ops, Team', address: 'sender@example.com' }]);
    expect((Array.isArray(m.parsed.to) ? m.parsed.to[0]! : m.parsed.to!).value).toEqual([
      { name: 'Roe, Rick', address: 'rick@example.net' },
    ]);
  });

  it('an internationalised sender domain, added in either form, verifies and sends with an ASCII Message-ID', async () => {
    const added = await call('POST', `${stack.admin}/accounts/${stack.accountId}/domains`, {
      token: ADMIN_TOKEN,
      body: { name: 'Bücher.de' },
    });
    expect(added.status, added.text).toBe(200);
    expect(added.body.name).toBe('xn--bcher-kva.de');
    expect(
      (
        await call('POST', `${stack.admin}/domains/${added.body.id as string}/verify`, {
          token: ADMIN_TOKEN,
          body: { force: true },
        })
      ).body.verified,
    ).toBe(true);
    const res = await send(validEmail({ from: 'Zoë <zoe@bücher.de>' }));
    expect(res.status, res.text).toBe(200);
    const m = await arrived(res.body.id as string);
    expect(m.messageId).toBe(`<${res.body.id as string}@xn--bcher-kva.de>`);
    expect(m.parsed.from?.value[0]?.name).toBe('Zoë');
  });
});
