import net from 'node:net';
import { authenticate } from 'mailauth';
import nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import { describe, expect, it } from 'vitest';
import { addDomain, admin, createKey, createSender } from '../helpers/admin-fixtures.js';
import { call, eventually } from '../helpers/http.js';
import { freePort } from '../helpers/ports.js';
import { returnPathPattern } from '../helpers/return-path.js';
import type { SinkMessage } from '../helpers/smtp-sink.js';
import type { Stack } from '../helpers/stack.js';
import { SmtpConversation } from '../helpers/smtp-conversation.js';
import { useStack } from '../helpers/use-stack.js';

// The stack's submission listener on a port of its own (the test stack turns it off by default).
const stack = useStack(async () => ({ MAILER_SUBMISSION_PORT: String(await freePort()) }));

/** A mail client as applications configure one: STARTTLS required, the API key as the password. */
function client(pass: string) {
  const url = new URL(stack.mailer.submissionUrl!);
  return nodemailer.createTransport({
    host: url.hostname,
    port: Number(url.port),
    secure: false,
    requireTLS: true,
    tls: { rejectUnauthorized: false },
    auth: { user: 'any', pass },
  } satisfies SMTPTransport.Options);
}

/** The SMTP error a send fails with (nodemailer's responseCode and response). */
async function refusal(send: Promise<unknown>): Promise<{ responseCode: number; response: string }> {
  const err = (await send.then(
    () => undefined,
    (e: unknown) => e,
  )) as { responseCode?: number; response?: string } | undefined;
  if (!err) throw new Error('expected the send to be refused');
  return { responseCode: err.responseCode ?? 0, response: err.response ?? String(err) };
}

const idOf = (response: string) => /queued as (em_[0-9a-z]{26})\b/.exec(response)?.[1];

async function arrival(s: Stack, emailId: string): Promise<SinkMessage> {
  return eventually(async () => s.sink.messages.find((m) => m.parsed.headers.get('x-mail-email-id') === emailId));
}

/** Every copy of an email the sink got (one per recipient, each under that recipient's return path), once `count` have come. */
async function copies(s: Stack, emailId: string, count: number): Promise<SinkMessage[]> {
  return eventually(async () => {
    const found = s.sink.messages.filter((m) => m.parsed.headers.get('x-mail-email-id') === emailId);
    return found.length >= count ? found : undefined;
  });
}

/** Whether a receiver finds the message's DKIM signature valid, with the key example.com publishes. */
async function dkimVerdict(s: Stack, raw: Buffer): Promise<{ status: string; domain: string }[]> {
  const listed = await admin<{
    domains: { name: string; dns_records: { name: string; value: string; purpose: string }[] }[];
  }>(s, 'GET', `/accounts/${s.accountId}/domains`);
  const dkim = listed.body.domains
    .find((d) => d.name === 'example.com')!
    .dns_records.find((r) => r.purpose === 'dkim')!;
  const result = await authenticate(raw, {
    ip: '127.0.0.1',
    helo: 'mailer.test',
    sender: 'x@example.com',
    mta: 'mx.receiver.test',
    disableArc: true,
    disableBimi: true,
    resolver: async (name: string, type: string) => {
      if (name === dkim.name && type === 'TXT') return [[dkim.value]];
      throw Object.assign(new Error(`no ${type} record for ${name}`), { code: 'ENOTFOUND' });
    },
  });
  return result.dkim.results.map((r) => ({ status: r.status.result, domain: r.signingDomain }));
}

describe('SMTP submission with nodemailer as the client', () => {
  it("turns a message into an email like POST /emails (job_type direct), delivered signed with the service's return path", async () => {
    const info = await client(stack.apiKey).sendMail({
      from: 'App <app@example.com>',
      to: 'Ann <ann@example.net>',
      cc: 'cc@example.net',
      bcc: 'hidden@example.net',
      replyTo: 'reply@example.com',
      subject: 'Over SMTP',
      text: 'plain body',
      html: '<p>html <b>body</b></p>',
      headers: { 'X-Campaign': 'smtp' },
      attachments: [{ filename: 'report.csv', content: 'a,b\n1,2\n', contentType: 'text/csv' }],
    });
    expect(info.response).toMatch(/^250 2\.0\.0 OK: queued as em_[0-9a-z]{26}$/);
    const id = idOf(info.response)!;

    const listed = await call<{ data: { id: string }[] }>('GET', `${stack.api}/emails?page_size=100`, {
      token: stack.apiKey,
    });
    expect(listed.body.data.map((e) => e.id)).toContain(id);
    const detail = await call('GET', `${stack.api}/emails/${id}`, { token: stack.apiKey });
    expect(detail.body).toMatchObject({
      id,
      from: 'App <app@example.com>',
      to: ['Ann <ann@example.net>'],
      cc: ['cc@example.net'],
      bcc: ['hidden@example.net'],
      reply_to: ['reply@example.com'],
      subject: 'Over SMTP',
      text: 'plain body',
      html: '<p>html <b>body</b></p>',
      headers: { 'X-Campaign': 'smtp' },
      job_type: 'direct',
      job_id: '',
    });
    const headerNames = Object.keys(detail.body.headers as object).map((h) => h.toLowerCase());
    expect(headerNames).not.toContain('message-id');
    expect(headerNames).not.toContain('content-type');

    // A copy per recipient (to, cc, bcc in that order), each under its own return path; the bytes are one message.
    const all = await copies(stack, id, 3);
    const byRecipient = new Map(all.map((m) => [m.envelopeTo.join(), m]));
    expect([...byRecipient.keys()].sort()).toEqual(['ann@example.net', 'cc@example.net', 'hidden@example.net']);
    ['ann@example.net', 'cc@example.net', 'hidden@example.net'].forEach((r, i) =>
      expect(byRecipient.get(r)!.envelopeFrom).toMatch(returnPathPattern(id, 'example.com', i)),
    );
    expect(new Set(all.map((m) => m.raw.toString())).size).toBe(1);
    const msg = all[0]!;
    expect(msg.raw.toString()).not.toContain('hidden@example.net');
    expect(msg.parsed.messageId).toBe(`<${id}@example.com>`);
    expect(msg.parsed.text?.trim()).toBe('plain body');
    expect(msg.parsed.html).toContain('<b>body</b>');
    expect(msg.parsed.headers.get('x-campaign')).toBe('smtp');
    expect(msg.parsed.attachments.map((a) => [a.filename, a.contentType, a.content.toString()])).toEqual([
      ['report.csv', 'text/csv', 'a,b\n1,2\n'],
    ]);
    expect(await dkimVerdict(stack, msg.raw)).toEqual([{ status: 'pass', domain: 'example.com' }]);
  });

  it('keeps an inline cid: image inline, with the same content id', async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    const info = await client(stack.apiKey).sendMail({
      from: 'app@example.com',
      to: 'ann@example.net',
      subject: 'Inline',
      html: '<p><img src="cid:logo@app"></p>',
      attachments: [{ filename: 'logo.png', content: png, contentType: 'image/png', cid: 'logo@app' }],
    });
    const id = idOf(info.response)!;

    const detail = await call<{ attachments: { filename: string; content_id: string }[] }>(
      'GET',
      `${stack.api}/emails/${id}`,
      { token: stack.apiKey },
    );
    expect(detail.body.attachments.map((a) => [a.filename, a.content_id])).toEqual([['logo.png', 'logo@app']]);
    const msg = await arrival(stack, id);
    expect(msg.parsed.attachments).toHaveLength(1);
    expect(msg.parsed.attachments[0]).toMatchObject({
      filename: 'logo.png',
      contentId: '<logo@app>',
      related: true,
      contentDisposition: 'inline',
    });
    expect(msg.parsed.attachments[0]!.content.equals(png)).toBe(true);
    expect(msg.parsed.html).toContain(`<img src="data:image/png;base64,${png.toString('base64')}">`);
  });

  it('answers a wrong API key 535 5.7.8, and sends nothing', async () => {
    const r = await refusal(
      client('mk_not-a-real-key-0123456789').sendMail({
        from: 'a@example.com',
        to: 'b@example.net',
        subject: 's',
        text: 't',
      }),
    );
    expect(r.responseCode).toBe(535);
    expect(r.response).toMatch(/^535 5\.7\.8 /);
  });

  it('answers a sender domain the key may not use 550 5.7.1: at MAIL FROM, and for a From header of another domain', async () => {
    const envelope = await refusal(
      client(stack.apiKey).sendMail({ from: 'a@not-ours.test', to: 'b@example.net', subject: 's', text: 't' }),
    );
    expect(envelope.responseCode).toBe(550);
    expect(envelope.response).toMatch(/^550 5\.7\.1 .*not-ours\.test/);

    const header = await refusal(
      client(stack.apiKey).sendMail({
        envelope: { from: 'a@example.com', to: ['b@example.net'] },
        from: 'a@not-ours.test',
        to: 'b@example.net',
        subject: 's',
        text: 't',
      }),
    );
    expect(header.response).toMatch(/^550 5\.7\.1 .*not-ours\.test/);
  });

  it('holds a key to its allowed_domains, as the API does', async () => {
    await addDomain(stack, stack.accountId, 'second.test');
    const key = await createKey(stack, stack.accountId, 'send_only', ['second.test']);
    const r = await refusal(
      client(key.key).sendMail({ from: 'a@example.com', to: 'b@example.net', subject: 's', text: 't' }),
    );
    expect(r.response).toMatch(/^550 5\.7\.1 .*example\.com/);
    const ok = await client(key.key).sendMail({ from: 'a@second.test', to: 'b@example.net', subject: 's', text: 't' });
    expect(idOf(ok.response)).toBeDefined();
  });

  it('answers the daily quota 452 4.4.5 (a client queues the message and retries later)', async () => {
    const sender = await createSender(stack, 'smtp quota', 'quota-smtp.test');
    await admin(stack, 'PATCH', `/accounts/${sender.accountId}`, { daily_quota: 1 });
    const mail = { from: 'a@quota-smtp.test', to: 'b@example.net', subject: 's', text: 't' };
    expect(idOf((await client(sender.key).sendMail(mail)).response)).toBeDefined();
    const r = await refusal(client(sender.key).sendMail(mail));
    expect(r.responseCode).toBe(452);
    expect(r.response).toMatch(/^452 4\.4\.5 daily quota exceeded \(1\/1\)/);
  });
});

/** A TCP relay to the submission listener that keeps every byte the client sends. */
async function recordingRelay(target: URL): Promise<{ port: number; sent: () => string; close: () => Promise<void> }> {
  const chunks: Buffer[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => s.destroy());
      s.on('close', () => (s === client ? upstream : client).destroy());
    }
    client.on('data', (d: Buffer) => chunks.push(d));
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    sent: () => Buffer.concat(chunks).toString('latin1'),
    close: () =>
      new Promise((resolve) => {
        sockets.forEach((s) => s.destroy());
        server.close(() => resolve());
      }),
  };
}

describe('SMTP submission, no credential in clear', () => {
  it('a client that does not insist on STARTTLS is offered no AUTH, so it never sends its API key; its message is refused 530', async () => {
    const relay = await recordingRelay(new URL(stack.mailer.submissionUrl!));
    try {
      // nodemailer logs in only where AUTH is offered, as Python's smtplib.login() and swaks do.
      const inClear = nodemailer.createTransport({
        host: '127.0.0.1',
        port: relay.port,
        secure: false,
        ignoreTLS: true,
        auth: { user: 'any', pass: stack.apiKey },
      });
      const r = await refusal(
        inClear.sendMail({ from: 'a@example.com', to: 'b@example.net', subject: 's', text: 't' }),
      );
      expect(r.response).toMatch(/^530 5\.7\.0 Must issue a STARTTLS command first/);
      const sent = relay.sent();
      expect(sent).toMatch(/^EHLO /m);
      expect(sent).not.toMatch(/^AUTH/im);
      expect(sent).not.toContain(plain('any', stack.apiKey));
      expect(sent).not.toContain(b64(stack.apiKey));
      expect(sent).not.toContain(stack.apiKey);
    } finally {
      await relay.close();
    }
  });
});

const plain = (...parts: string[]) => Buffer.from(`\0${parts.join('\0')}`).toString('base64');
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('SMTP submission, a raw conversation', () => {
  it('offers and takes AUTH only after STARTTLS, refuses a bad key, refuses an announced size over the limit, caps recipients at 50 and answers 250 with the email id', async () => {
    const url = new URL(stack.mailer.submissionUrl!);
    const smtp = await SmtpConversation.open(url.hostname, Number(url.port));
    try {
      expect((await smtp.read()).code).toBe(220);
      const ehlo = await smtp.command('EHLO client.test');
      expect(ehlo.code).toBe(250);
      expect(ehlo.lines).toContain('STARTTLS');
      // No AUTH offered in clear (as Postfix's smtpd_tls_auth_only), so a client that logs in wherever AUTH is
      // offered never sends its API key here; a client that sends one anyway is refused without it being
      // looked at, and nothing is taken before STARTTLS and AUTH.
      expect(ehlo.lines.filter((l) => /^AUTH\b/i.test(l))).toEqual([]);
      expect((await smtp.command(`AUTH PLAIN ${plain('any', stack.apiKey)}`)).text).toMatch(/^500 /);
      expect((await smtp.command('MAIL FROM:<a@example.com>')).text).toMatch(
        /^530 5\.7\.0 Must issue a STARTTLS command first/,
      );

      expect((await smtp.command('STARTTLS')).code).toBe(220);
      await smtp.startTls();
      expect(smtp.encrypted).toBe(true);
      const secured = await smtp.command('EHLO client.test');
      expect(secured.lines).toContain('AUTH PLAIN LOGIN');
      expect(secured.lines.some((l) => l.startsWith('SIZE '))).toBe(true);

      const bad = await smtp.command(`AUTH PLAIN ${plain('any', 'mk_wrong-key-0123456789abcdef')}`);
      expect(bad.text).toMatch(/^535 5\.7\.8 /);
      expect((await smtp.command('AUTH LOGIN')).code).toBe(334);
      expect((await smtp.command(b64('any'))).code).toBe(334);
      expect((await smtp.command(b64(stack.apiKey))).code).toBe(235);

      // A message announced larger than the listener reads is refused before it is sent.
      expect((await smtp.command('MAIL FROM:<app@example.com> SIZE=999999999')).code).toBe(552);
      expect((await smtp.command('MAIL FROM:<app@example.com>')).code).toBe(250);
      const rcpts = Array.from({ length: 50 }, (_, i) => `r${i}@example.net`);
      for (const r of rcpts) expect((await smtp.command(`RCPT TO:<${r}>`)).code).toBe(250);
      expect((await smtp.command('RCPT TO:<r50@example.net>')).text).toMatch(/^452 4\.5\.3 too many recipients/);
      expect((await smtp.command('DATA')).code).toBe(354);
      const done = await smtp.data(
        [
          'From: App <app@example.com>',
          'To: r0@example.net',
          'Subject: Raw',
          'Message-ID: <original@client.test>',
          'Received: from somewhere by client.test',
          'X-Ticket: 42',
          '',
          'Hello over raw SMTP.',
          '.leading dot',
          '',
        ].join('\r\n'),
      );
      expect(done.text).toMatch(/^250 2\.0\.0 OK: queued as em_[0-9a-z]{26}\r\n$/);
      const id = idOf(done.text)!;
      expect((await smtp.command('QUIT')).code).toBe(221);

      const detail = await call('GET', `${stack.api}/emails/${id}`, { token: stack.apiKey });
      expect(detail.body).toMatchObject({
        to: ['r0@example.net'],
        subject: 'Raw',
        headers: { 'X-Ticket': '42' },
        job_type: 'direct',
      });
      expect((detail.body.bcc as string[]).sort()).toEqual(rcpts.slice(1).sort());
      expect(Object.keys(detail.body.headers as object)).toEqual(['X-Ticket']);
      const all = await copies(stack, id, 50);
      expect(all.flatMap((m) => m.envelopeTo).sort()).toEqual([...rcpts].sort());
      const msg = all[0]!;
      expect(msg.parsed.text).toContain('.leading dot');
      expect(msg.parsed.messageId).toBe(`<${id}@example.com>`);
    } finally {
      smtp.close();
    }
  });
});
