import net from 'node:net';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idAt } from '../../src/ids.js';
import { createEventFeedRepo } from '../../src/db/repos/event-feed-repo.js';
import { createInboundBlobsRepo } from '../../src/db/repos/inbound-blobs-repo.js';
import { createInboundReceiveRepo } from '../../src/db/repos/inbound-receive-repo.js';
import { createInboundRoutesRepo } from '../../src/db/repos/inbound-routes-repo.js';
import { parseInbound as parse } from '../../src/inbound/inbound-parse.js';
import {
  MAX_INBOUND_BYTES,
  MAX_REFUSED_RECIPIENTS,
  startInboundServer,
  type InboundServer,
} from '../../src/inbound/report-listener.js';
import { loadTlsCertificate } from '../../src/inbound/tls-certificate.js';
import { createLogger } from '../../src/logger.js';
import { createInboundMailService, type InboundMailDeps } from '../../src/services/inbound-mail-service.js';
import { createInboundRoutesService } from '../../src/services/inbound-routes-service.js';
import { call, eventually, validEmail } from '../helpers/http.js';
import { useStack } from '../helpers/use-stack.js';

const MiB = 1024 * 1024;
/** The routes' cap in these tests: above the reports' 1 MiB, small enough to send past it quickly. */
const MAX_BYTES = 3 * MiB;

/** A stand-in for inbound/inbound-auth.ts's authenticateInbound. */
const authenticate = async () => ({ spf: 'none', dkim: 'none', dmarc: 'none' });

describe('the inbound listener as an MX', () => {
  const stack = useStack();
  const logger = createLogger('silent', 'test');
  const reports: string[][] = [];
  let server: InboundServer;
  let failing: InboundServer;
  let unreadable: InboundServer;
  let accountB: string;

  const start = async (overrides: Partial<InboundMailDeps> = {}) => {
    const sql = stack.mailer.sql;
    const tls = await loadTlsCertificate({
      certFile: undefined,
      keyFile: undefined,
      dataDir: stack.dataDir,
      hostname: 'mx.mailer.test',
    });
    const acceptsRecipient = (a: string) => !a.startsWith('b-');
    const mail = createInboundMailService({
      blobs: createInboundBlobsRepo(sql),
      receipts: createInboundReceiveRepo(sql),
      // The routes service's resolver (only its route repo is read by resolve).
      routes: createInboundRoutesService({
        routes: createInboundRoutesRepo(sql),
        domains: { listByAccount: async () => [] },
        accounts: { get: async () => undefined },
      }),
      reports: { acceptsRecipient },
      parse,
      authenticate,
      maxBytes: MAX_BYTES,
      logger,
      ...overrides,
    });
    return startInboundServer({
      host: '127.0.0.1',
      port: 0,
      logger,
      tls,
      limits: { perAddress: 50, setupMs: 30_000 },
      acceptsRecipient,
      onMessage: async (_raw, envelope) => {
        reports.push(envelope.rcptTo);
        return 'recorded';
      },
      routes: mail,
    });
  };

  beforeAll(async () => {
    const sql = stack.mailer.sql;
    accountB = 'acc_01jbq7m3k2x9f5v8r4t6w0yb00';
    await sql`insert into accounts (id, name) values (${accountB}, 'B')`;
    await sql`insert into domains (id, account_id, name, verification_token, verified_at) values
      ('dom_01jbq7m3k2x9f5v8r4t6w0ya00', ${stack.accountId}, 'acme.test', 't', now()),
      ('dom_01jbq7m3k2x9f5v8r4t6w0yb00', ${accountB}, 'bravo.test', 't', now())`;
    await sql`insert into inbound_routes (id, account_id, domain_id, local_part, domain) values
      ('rt_01jbq7m3k2x9f5v8r4t6w0ya01', ${stack.accountId}, 'dom_01jbq7m3k2x9f5v8r4t6w0ya00', 'support', 'acme.test'),
      ('rt_01jbq7m3k2x9f5v8r4t6w0yb01', ${accountB}, 'dom_01jbq7m3k2x9f5v8r4t6w0yb00', '*', 'bravo.test')`;
    server = await start();
    failing = await start({
      receipts: {
        isRoutedDomain: (domain) =>
          domain === 'down.test'
            ? Promise.reject(new Error('the database went away'))
            : createInboundReceiveRepo(stack.mailer.sql).isRoutedDomain(domain),
        record: () => Promise.reject(new Error('the database went away')),
      },
    });
    // The parser giving up on the message itself (mailparser's limits: over 1,000 MIME parts, say).
    unreadable = await start({
      parse: async (source) => {
        for await (const piece of source) void piece;
        throw new Error('too many MIME parts');
      },
    });
  });
  afterAll(async () => {
    await server?.close();
    await failing?.close();
    await unreadable?.close();
  });

  /** Sends `raw` with nodemailer over STARTTLS; answers the server's last reply, or rejects with its error. */
  async function deliver(url: string, to: string[], raw: string | Buffer, from = 'sender@elsewhere.test') {
    const transport = nodemailer.createTransport({ url, requireTLS: true, tls: { rejectUnauthorized: false } });
    try {
      return (await transport.sendMail({ envelope: { from, to }, raw })).response;
    } finally {
      transport.close();
    }
  }

  const message = (to: string, extra = '', body = 'Hello inbound') =>
    `From: Alice <alice@elsewhere.test>\r\nTo: ${to}\r\nSubject: Hi\r\nMessage-ID: <m${Math.random()}@elsewhere.test>\r\n${extra}\r\n${body}\r\n`;

  const counts = async () => {
    const [row] = await stack.mailer.sql<{ emails: number; blobs: number }[]>`
      select (select count(*) from inbound_emails)::int as emails, (select count(*) from inbound_blobs)::int as blobs`;
    return row!;
  };

  it('announces SIZE, refuses unknown recipients at a routed domain 550 5.1.1, takes report addresses as before', async () => {
    const replies = await converse(server.url, [
      'EHLO client.test',
      'MAIL FROM:<x@elsewhere.test>',
      'RCPT TO:<nobody@acme.test>',
      'RCPT TO:<b-forged@rp.acme.test>',
      'RCPT TO:<fbl@mailer.test>',
      'RCPT TO:<anything@bravo.test>',
      'RCPT TO:<support+t1@acme.test>',
    ]);
    expect(replies[0]).toMatch(new RegExp(`250[- ]SIZE ${MAX_BYTES}\\b`));
    expect(replies[2]).toMatch(/^550 5\.1\.1 /);
    expect(replies[3]).toMatch(/^550 5\.1\.1 /);
    expect(replies[4]).toMatch(/^250 /);
    expect(replies[5]).toMatch(/^250 /);
    expect(replies[6]).toMatch(/^250 /);
  });

  it('closes a connection that keeps guessing addresses: 421 at the 20th refused recipient', async () => {
    const guesses = Array.from({ length: MAX_REFUSED_RECIPIENTS }, (_, i) => `RCPT TO:<guess${i}@acme.test>`);
    const replies = await converse(server.url, ['EHLO client.test', 'MAIL FROM:<x@elsewhere.test>', ...guesses]);
    expect(replies.slice(2, -1).every((r) => r.startsWith('550 5.1.1 '))).toBe(true);
    expect(replies.at(-1)).toMatch(/^421 4\.7\.0 too many unknown recipients/);
    // An accepted recipient does not count: a client with real mail is not cut off by one typo.
    const mixed = await converse(server.url, [
      'EHLO client.test',
      'MAIL FROM:<x@elsewhere.test>',
      'RCPT TO:<typo@acme.test>',
      'RCPT TO:<support@acme.test>',
    ]);
    expect(mixed.slice(2)).toEqual([expect.stringMatching(/^550 /), expect.stringMatching(/^250 /)]);
  });

  it('stores a message for a route with its mailbox_hash, its raw bytes and its inbound event', async () => {
    const raw = message('support+ticket-42@acme.test');
    expect(await deliver(server.url, ['support+ticket-42@acme.test'], raw)).toMatch(/^250 /);
    const [row] = await stack.mailer.sql<
      { id: string; account_id: string; mailbox_hash: string; raw_key: string; raw_size: string; envelope_to: string }[]
    >`select * from inbound_emails where envelope_to = 'support+ticket-42@acme.test'`;
    expect(row).toMatchObject({ account_id: stack.accountId, mailbox_hash: 'ticket-42', raw_key: `${row!.id}/raw` });
    expect(Number(row!.raw_size)).toBe(Buffer.byteLength(raw));
    const stored = Buffer.concat(await createInboundBlobsRepo(stack.mailer.sql).read(row!.raw_key).toArray());
    expect(stored.toString()).toBe(raw);
    const events = await stack.mailer.sql<
      { type: string; email_id: string | null; account_id: string; data: Record<string, unknown> }[]
    >`
      select type, email_id, account_id, data from events where inbound_id = ${row!.id}`;
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'inbound', email_id: null, account_id: stack.accountId });
    expect(events[0]!.data).toMatchObject({
      id: row!.id,
      route_id: 'rt_01jbq7m3k2x9f5v8r4t6w0ya01',
      from: 'alice@elsewhere.test',
      from_name: 'Alice',
      subject: 'Hi',
      mailbox_hash: 'ticket-42',
      reply_to_email_id: null,
      authentication: { spf: 'none', dkim: 'none', dmarc: 'none' },
    });
    // The bodies are stored once, in the inbound email's row; the event as read (webhooks, GET /events) has them.
    expect(Object.keys(events[0]!.data)).not.toContain('text');
    expect(Object.keys(events[0]!.data)).not.toContain('html');
    expect(Object.keys(events[0]!.data)).not.toContain('stripped_text');
    const [read] = await eventually(async () => {
      const feed = await createEventFeedRepo(stack.mailer.sql).after(stack.accountId, undefined, 'inbound', 100);
      const mine = feed.filter((e) => e.data.id === row!.id);
      return mine.length === 1 ? mine : undefined;
    });
    expect(read!.data).toMatchObject({
      id: row!.id,
      subject: 'Hi',
      text: 'Hello inbound\n',
      stripped_text: 'Hello inbound',
    });
    expect(read!.data.truncated).toBeUndefined();
  });

  it('takes a message over 1 MiB for a route, refuses one for reports only (552), and one over the cap (552, nothing kept)', async () => {
    const big = message('support@acme.test', '', `${'a'.repeat(76)}\r\n`.repeat(20_000));
    expect(Buffer.byteLength(big)).toBeGreaterThan(MAX_INBOUND_BYTES);
    expect(await deliver(server.url, ['support@acme.test'], big)).toMatch(/^250 /);
    await expect(deliver(server.url, ['fbl@mailer.test'], big)).rejects.toMatchObject({ responseCode: 552 });
    const before = await counts();
    const huge = message('support@acme.test', '', `${'b'.repeat(76)}\r\n`.repeat(45_000));
    expect(Buffer.byteLength(huge)).toBeGreaterThan(MAX_BYTES);
    await expect(deliver(server.url, ['support@acme.test'], huge)).rejects.toMatchObject({ responseCode: 552 });
    expect(await counts()).toEqual(before);
    // SIZE= refuses before the bytes: at MAIL FROM past the cap, at RCPT TO past a report's.
    const replies = await converse(server.url, [
      'EHLO client.test',
      `MAIL FROM:<x@elsewhere.test> SIZE=${MAX_BYTES + 1}`,
      'RSET',
      `MAIL FROM:<x@elsewhere.test> SIZE=${2 * MiB}`,
      'RCPT TO:<fbl@mailer.test>',
      'RCPT TO:<support@acme.test>',
    ]);
    expect(replies[1]).toMatch(/^552 /);
    expect(replies[4]).toMatch(/^552 5\.3\.4 /);
    expect(replies[5]).toMatch(/^250 /);
  });

  it('keeps each account to its own: one message to two accounts becomes an inbound email in each', async () => {
    const raw = message('support@acme.test, sales@bravo.test');
    expect(await deliver(server.url, ['support@acme.test', 'sales@bravo.test'], raw)).toMatch(/^250 /);
    const rows = await stack.mailer.sql<{ id: string; account_id: string; envelope_to: string; raw_key: string }[]>`
      select id, account_id, envelope_to, raw_key from inbound_emails
      where envelope_to in ('support@acme.test', 'sales@bravo.test') and subject = 'Hi' and raw_size = ${Buffer.byteLength(raw)}`;
    expect(rows.map((r) => [r.envelope_to, r.account_id]).sort()).toEqual(
      [
        ['sales@bravo.test', accountB],
        ['support@acme.test', stack.accountId],
      ].sort(),
    );
    const blobs = createInboundBlobsRepo(stack.mailer.sql);
    for (const r of rows) {
      expect(Buffer.concat(await blobs.read(r.raw_key).toArray()).toString()).toBe(raw);
      const events = await stack.mailer.sql<
        { account_id: string }[]
      >`select account_id from events where inbound_id = ${r.id}`;
      expect(events).toEqual([{ account_id: r.account_id }]);
    }
  });

  it('ties a reply to the email it answers: reply_to_email_id and a reply event on that email', async () => {
    const sent = await call('POST', `${stack.api}/emails`, { token: stack.apiKey, body: validEmail() });
    expect(sent.status).toBe(200);
    const emailId = sent.body.id as string;
    const [email] = await stack.mailer.sql<{ header_message_id: string }[]>`
      select header_message_id from emails where id = ${emailId}`;
    const raw = message('support@acme.test', `In-Reply-To: ${email!.header_message_id}\r\n`);
    expect(await deliver(server.url, ['support@acme.test'], raw)).toMatch(/^250 /);
    const [row] = await stack.mailer.sql<{ id: string; reply_to_email_id: string | null }[]>`
      select id, reply_to_email_id from inbound_emails where in_reply_to = ${email!.header_message_id}`;
    expect(row!.reply_to_email_id).toBe(emailId);
    const reply = await eventually(async () => {
      const [e] = await stack.mailer.sql<{ data: Record<string, unknown>; account_id: string }[]>`
        select data, account_id from events where email_id = ${emailId} and type = 'reply'`;
      return e;
    });
    expect(reply).toEqual({ data: { inbound_id: row!.id, from: 'alice@elsewhere.test' }, account_id: stack.accountId });
    const [inbound] = await stack.mailer.sql<{ data: Record<string, unknown> }[]>`
      select data from events where inbound_id = ${row!.id} and type = 'inbound'`;
    expect(inbound!.data.reply_to_email_id).toBe(emailId);

    // Named in References only, without its angle brackets: it matches all the same.
    const bare = email!.header_message_id.slice(1, -1);
    const later = message('support+refs@acme.test', `References: ${bare}\r\n`);
    expect(await deliver(server.url, ['support+refs@acme.test'], later)).toMatch(/^250 /);
    const [byRefs] = await stack.mailer.sql<{ reply_to_email_id: string | null }[]>`
      select reply_to_email_id from inbound_emails where envelope_to = 'support+refs@acme.test'`;
    expect(byRefs!.reply_to_email_id).toBe(emailId);

    // Another account's route receiving the same reply does not tie it to this account's email.
    const other = message('x@bravo.test', `In-Reply-To: ${email!.header_message_id}\r\n`);
    expect(await deliver(server.url, ['x@bravo.test'], other)).toMatch(/^250 /);
    const [foreign] = await stack.mailer.sql<{ reply_to_email_id: string | null }[]>`
      select reply_to_email_id from inbound_emails where envelope_to = 'x@bravo.test'`;
    expect(foreign!.reply_to_email_id).toBeNull();
  });

  it('answers 451 when storing fails, leaving no row and no bytes', async () => {
    const before = await counts();
    const raw = message('support@acme.test', '', `${'c'.repeat(76)}\r\n`.repeat(10_000));
    await expect(deliver(failing.url, ['support@acme.test'], raw)).rejects.toMatchObject({ responseCode: 451 });
    expect(await counts()).toEqual(before);
    // A recipient that cannot be looked up is asked again later, not refused.
    const replies = await converse(failing.url, [
      'EHLO client.test',
      'MAIL FROM:<x@elsewhere.test>',
      'RCPT TO:<a@down.test>',
    ]);
    expect(replies[2]).toMatch(/^451 4\.3\.0 /);
  });

  it('refuses a message the parser cannot read with 554 5.6.0 (retrying would not help), leaving nothing', async () => {
    const before = await counts();
    const raw = message('support@acme.test', '', `${'e'.repeat(76)}\r\n`.repeat(20_000));
    await expect(deliver(unreadable.url, ['support@acme.test'], raw)).rejects.toMatchObject({
      responseCode: 554,
      response: expect.stringMatching(/^554 5\.6\.0 /),
    });
    expect(await counts()).toEqual(before);
  });

  it('writes the bytes while DATA still arrives (the message is never held whole)', async () => {
    const { hostname, port } = new URL(server.url);
    const socket = net.connect(Number(port), hostname);
    const talk = lineReader(socket);
    await talk.next();
    for (const c of ['EHLO client.test', 'MAIL FROM:<x@elsewhere.test>', 'RCPT TO:<support@acme.test>', 'DATA']) {
      socket.write(`${c}\r\n`);
      await talk.next();
    }
    const before = await counts();
    socket.write(message('support@acme.test', '', `${'d'.repeat(76)}\r\n`.repeat(25_000)));
    // About 1.9 MiB sent, no end of DATA yet: chunks of it are rows already.
    const written = await eventually(async () => {
      const now = await counts();
      return now.blobs >= before.blobs + 4 ? now : undefined;
    });
    expect(written.emails).toBe(before.emails);
    socket.write('.\r\n');
    expect(await talk.next()).toMatch(/^250 /);
    socket.destroy();
    expect((await counts()).emails).toBe(before.emails + 1);
  });

  it('reports to a route recipient and a report address in one transaction each get it', async () => {
    reports.length = 0;
    expect(await deliver(server.url, ['support@acme.test', 'fbl@mailer.test'], message('support@acme.test'))).toMatch(
      /^250 /,
    );
    expect(reports).toEqual([['fbl@mailer.test']]);
  });

  it("sweeps orphan bytes: older than the cutoff, their inbound email not there; another's are kept", async () => {
    const sql = stack.mailer.sql;
    const blobs = createInboundBlobsRepo(sql);
    const [kept] = await sql<{ raw_key: string }[]>`select raw_key from inbound_emails limit 1`;
    // Keys as the store makes them: the inbound id, time-ordered, minted when the message arrived.
    const hoursAgo = (h: number, tail: string) => `${idAt('inbound', new Date(Date.now() - h * 3_600_000))}${tail}/raw`;
    const [old, young, ancient] = [hoursAgo(2, 'orphanold'), hoursAgo(0, 'orphannew'), hoursAgo(72, 'orphanancient')];
    await sql`insert into inbound_blobs (key, seq, data, created_at) values
      (${old}, 0, '\\x00', now() - interval '2 hours'),
      (${young}, 0, '\\x00', now()),
      (${ancient}, 0, '\\x00', now() - interval '72 hours')`;
    await sql`update inbound_blobs set created_at = now() - interval '2 hours' where key = ${kept!.raw_key}`;
    const swept = await blobs.deleteOrphanBlobs(new Date(Date.now() - 3_600_000), 1000);
    expect(swept.rows).toBe(1);
    const left = await sql<{ key: string }[]>`
      select key from inbound_blobs where key in (${old}, ${young}, ${ancient}, ${kept!.raw_key}) and seq = 0`;
    // Past the sweep's window (2 days) bytes are not looked at: each run reads a range of keys, not every byte.
    expect(left.map((r) => r.key).sort()).toEqual([young, ancient, kept!.raw_key].sort());
  });
});

/** Reads SMTP replies off a socket, one whole (multi-line) reply per `next()`. */
function lineReader(socket: net.Socket) {
  let buffer = '';
  const waiting: ((reply: string) => void)[] = [];
  const pump = () => {
    for (;;) {
      const m = /(^|\r\n)(\d{3}) [^\r\n]*\r\n/.exec(buffer);
      if (!m || waiting.length === 0) return;
      const end = m.index + m[0].length;
      waiting.shift()!(buffer.slice(0, end).trim());
      buffer = buffer.slice(end);
    }
  };
  socket.on('data', (d: Buffer) => {
    buffer += d.toString();
    pump();
  });
  return {
    next: () =>
      new Promise<string>((resolve) => {
        waiting.push(resolve);
        pump();
      }),
  };
}

/** A raw SMTP conversation (no TLS): each command's reply. */
async function converse(url: string, commands: string[]): Promise<string[]> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  const talk = lineReader(socket);
  try {
    await talk.next();
    const replies: string[] = [];
    for (const c of commands) {
      socket.write(`${c}\r\n`);
      replies.push(await talk.next());
    }
    return replies;
  } finally {
    socket.destroy();
  }
}
