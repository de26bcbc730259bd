import nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import { describe, expect, it } from 'vitest';
import { MAX_INBOUND_SETTING_UP } from '../../src/inbound/report-listener.js';
import { MAX_UNAUTHENTICATED_SUBMISSIONS } from '../../src/inbound/submission-server.js';
import { freePort } from '../helpers/ports.js';
import { SmtpConversation, type SmtpAnswer } from '../helpers/smtp-conversation.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * The SMTP listeners' slots against strangers, over real TCP connections to the running listeners: each
 * loopback address (127.0.0.2, 127.0.1.10 ...) is another client. The setup deadline is short so that the
 * tests can wait it out; the per-address cap is the default. 127.0.0.9 plays a TCP proxy that names each
 * client in a PROXY protocol header, as the compose nginx does.
 */
const SETUP_SECONDS = 5;
const PER_ADDRESS = 10;
const PROXY = '127.0.0.9';
const stack = useStack(async () => ({
  MAILER_SUBMISSION_PORT: String(await freePort()),
  MAILER_SMTP_SETUP_SECONDS: String(SETUP_SECONDS),
  MAILER_SMTP_PROXY_PROTOCOL_FROM: PROXY,
}));

const where = (url: string) => {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port) };
};
const submission = () => where(stack.mailer.submissionUrl!);
const inbound = () => where(stack.mailer.inboundUrl!);
const plain = (...parts: string[]) => Buffer.from(`\0${parts.join('\0')}`).toString('base64');

interface Opened {
  smtp: SmtpConversation;
  first: SmtpAnswer;
}

/** `n` connections from `from` at once, each with its first reply (the greeting, or a 421). */
async function openMany(to: { host: string; port: number }, from: string, n: number): Promise<Opened[]> {
  return Promise.all(
    Array.from({ length: n }, async () => {
      const smtp = await SmtpConversation.open(to.host, to.port, from);
      return { smtp, first: await smtp.read() };
    }),
  );
}

const closeAll = (opened: Opened[]) => opened.forEach((o) => o.smtp.close());

/** PER_ADDRESS connections from each of `${prefix}.${from}` to `${prefix}.${to}`, all at once. */
async function strangersFrom(
  prefix: string,
  from: number,
  to: number,
  listener: { host: string; port: number },
): Promise<Opened[]> {
  const addresses = Array.from({ length: to - from + 1 }, (_, i) => `${prefix}.${from + i}`);
  return (await Promise.all(addresses.map((a) => openMany(listener, a, PER_ADDRESS)))).flat();
}

/** How many of `opened` were told they had waited the longest (each is read for 300 ms at most; none is closed otherwise). */
async function pushedOut(opened: Opened[]): Promise<number> {
  const replies = await Promise.all(
    opened.map((o) =>
      o.smtp.read(300).then(
        (a) => a.text,
        (err: Error) => err.message,
      ),
    ),
  );
  return replies.filter((r) => /^421 4\.7\.0 too many connections waiting; this one has waited the longest/.test(r))
    .length;
}

/** A submission connection from `from` that has done STARTTLS and AUTH. */
async function loggedIn(from: string): Promise<SmtpConversation> {
  const { host, port } = submission();
  const smtp = await SmtpConversation.open(host, port, from);
  expect((await smtp.read()).code).toBe(220);
  expect((await smtp.command('EHLO client.test')).code).toBe(250);
  expect((await smtp.command('STARTTLS')).code).toBe(220);
  await smtp.startTls();
  expect((await smtp.command('EHLO client.test')).code).toBe(250);
  expect((await smtp.command(`AUTH PLAIN ${plain('any', stack.apiKey)}`)).code).toBe(235);
  return smtp;
}

/** Sends one message on a logged-in submission connection; its final reply. */
async function sendOn(smtp: SmtpConversation, subject: string): Promise<string> {
  expect((await smtp.command('MAIL FROM:<app@example.com>')).code).toBe(250);
  expect((await smtp.command('RCPT TO:<ann@example.net>')).code).toBe(250);
  expect((await smtp.command('DATA')).code).toBe(354);
  return (await smtp.data(`From: app@example.com\r\nTo: ann@example.net\r\nSubject: ${subject}\r\n\r\nbody\r\n`)).text;
}

/** A mail client as applications configure one, connecting from `localAddress`. */
function client(localAddress: string) {
  const { host, port } = submission();
  return nodemailer.createTransport({
    host,
    port,
    localAddress,
    secure: false,
    requireTLS: true,
    tls: { rejectUnauthorized: false },
    auth: { user: 'any', pass: stack.apiKey },
  } satisfies SMTPTransport.Options);
}
const mail = (subject: string) => ({ from: 'app@example.com', to: 'ann@example.net', subject, text: 'body' });

const greeted = (o: Opened[]) => o.filter((c) => c.first.code === 220).length;
const refusedPerAddress = (o: Opened[]) =>
  o.filter((c) => /^421 4\.7\.0 too many connections from your address \(10\)/.test(c.first.text)).length;

describe('SMTP submission slots', () => {
  it('100 idle connections from one address hold 10 slots: a client from another address still sends', async () => {
    const idle = await openMany(submission(), '127.0.0.1', 100);
    try {
      expect(greeted(idle)).toBe(PER_ADDRESS);
      expect(refusedPerAddress(idle)).toBe(100 - PER_ADDRESS);
      const info = await client('127.0.0.2').sendMail(mail('past the idle ones'));
      expect(info.response).toMatch(/^250 2\.0\.0 OK: queued as em_/);
    } finally {
      closeAll(idle);
    }
  });

  it('authenticated connections do not count against their address', async () => {
    const sessions: SmtpConversation[] = [];
    try {
      for (let i = 0; i < PER_ADDRESS + 2; i++) sessions.push(await loggedIn('127.0.0.3'));
      expect(await sendOn(sessions.at(-1)!, 'twelfth')).toMatch(/^250 2\.0\.0 OK: queued as em_/);
    } finally {
      sessions.forEach((s) => s.close());
    }
  });

  it('strangers fill only the unauthenticated pool: a session logged in goes on, and a new client pushes out the one waiting longest', async () => {
    const established = await loggedIn('127.0.0.4');
    let first: Opened[] = [];
    let rest: Opened[] = [];
    try {
      // The first ten before the others, so that they are the oldest; 110 in all from 11 addresses, 10 more than the pool.
      first = await openMany(submission(), '127.0.1.10', PER_ADDRESS);
      rest = await strangersFrom('127.0.1', 11, 20, submission());
      expect(rest).toHaveLength(MAX_UNAUTHENTICATED_SUBMISSIONS);
      expect(greeted([...first, ...rest])).toBe(MAX_UNAUTHENTICATED_SUBMISSIONS + PER_ADDRESS);
      for (const o of first)
        expect((await o.smtp.read(2_000)).text).toMatch(
          /^421 4\.7\.0 too many connections waiting; this one has waited the longest/,
        );

      expect(await sendOn(established, 'through the flood')).toMatch(/^250 2\.0\.0 OK: queued as em_/);
      const info = await client('127.0.0.5').sendMail(mail('a new client in the flood'));
      expect(info.response).toMatch(/^250 2\.0\.0 OK: queued as em_/);
      // It got in by pushing out one stranger, not because the deadline had emptied the pool.
      expect(await pushedOut(rest)).toBe(1);
    } finally {
      established.close();
      closeAll(first);
      closeAll(rest);
    }
  });

  it(`closes a connection that has not done STARTTLS and AUTH within ${SETUP_SECONDS} s; a logged-in one stays`, async () => {
    const { host, port } = submission();
    const idle = await SmtpConversation.open(host, port, '127.0.0.6');
    const tlsOnly = await SmtpConversation.open(host, port, '127.0.0.6');
    const authed = await loggedIn('127.0.0.6');
    try {
      const start = Date.now();
      expect((await idle.read()).code).toBe(220);
      expect((await tlsOnly.read()).code).toBe(220);
      expect((await tlsOnly.command('EHLO client.test')).code).toBe(250);
      expect((await tlsOnly.command('STARTTLS')).code).toBe(220);
      await tlsOnly.startTls();
      expect((await tlsOnly.command('EHLO client.test')).code).toBe(250);

      const [plainClosed, tlsClosed] = await Promise.all([
        idle.read(SETUP_SECONDS * 1000 + 5_000),
        tlsOnly.read(SETUP_SECONDS * 1000 + 5_000),
      ]);
      const waited = Date.now() - start;
      expect(plainClosed.text).toBe(`421 4.4.2 STARTTLS and AUTH not done within ${SETUP_SECONDS} s, closing\r\n`);
      expect(tlsClosed.text).toBe(plainClosed.text);
      expect(waited).toBeGreaterThan(SETUP_SECONDS * 1000 - 1_000);
      await expect(idle.read(2_000)).rejects.toThrow(/connection closed/);
      await expect(tlsOnly.read(2_000)).rejects.toThrow(/connection closed/);

      expect((await authed.command('NOOP')).code).toBe(250);
    } finally {
      [idle, tlsOnly, authed].forEach((s) => s.close());
    }
  });
});

/** A raw report conversation up to DATA's 354, from `from`. */
async function atData(from: string): Promise<SmtpConversation> {
  const { host, port } = inbound();
  const smtp = await SmtpConversation.open(host, port, from);
  expect((await smtp.read()).code).toBe(220);
  expect((await smtp.command('EHLO mta.test')).code).toBe(250);
  expect((await smtp.command('MAIL FROM:<>')).code).toBe(250);
  expect((await smtp.command('RCPT TO:<fbl@mailer.test>')).code).toBe(250);
  expect((await smtp.command('DATA')).code).toBe(354);
  return smtp;
}
// No report token: answered 550 5.7.1, which is all these tests need (the listener served it).
const notAReport = 'From: someone@mta.test\r\nSubject: not a report\r\n\r\nhello\r\n';

describe('inbound report listener slots', () => {
  it('51 idle connections from one address hold 10 slots: a sender from another address is served', async () => {
    const idle = await openMany(inbound(), '127.0.0.1', 51);
    try {
      expect(greeted(idle)).toBe(PER_ADDRESS);
      expect(refusedPerAddress(idle)).toBe(51 - PER_ADDRESS);
      const sender = await atData('127.0.0.2');
      expect((await sender.data(notAReport)).text).toMatch(/^550 5\.7\.1 /);
      sender.close();
    } finally {
      closeAll(idle);
    }
  });

  it(`closes a connection that has not started DATA within ${SETUP_SECONDS} s, and again ${SETUP_SECONDS} s after its message`, async () => {
    const { host, port } = inbound();
    const idle = await SmtpConversation.open(host, port, '127.0.0.3');
    const talking = await SmtpConversation.open(host, port, '127.0.0.3');
    try {
      expect((await idle.read()).code).toBe(220);
      expect((await idle.command('EHLO mta.test')).code).toBe(250);
      expect((await idle.command('MAIL FROM:<>')).code).toBe(250);
      expect((await talking.read()).code).toBe(220);
      expect((await talking.command('EHLO mta.test')).code).toBe(250);

      const reply = `421 4.4.2 no DATA within ${SETUP_SECONDS} s, closing\r\n`;
      // `talking` sends a message half way through `idle`'s deadline: its own deadline starts again from the answer.
      await new Promise((resolve) => setTimeout(resolve, (SETUP_SECONDS * 1000) / 2));
      expect((await talking.command('MAIL FROM:<>')).code).toBe(250);
      expect((await talking.command('RCPT TO:<fbl@mailer.test>')).code).toBe(250);
      expect((await talking.command('DATA')).code).toBe(354);
      expect((await talking.data(notAReport)).text).toMatch(/^550 5\.7\.1 /);
      const answered = Date.now();

      expect((await idle.read(SETUP_SECONDS * 1000 + 5_000)).text).toBe(reply);
      await expect(idle.read(2_000)).rejects.toThrow(/connection closed/);
      expect((await talking.command('NOOP')).code).toBe(250);
      expect((await talking.read(SETUP_SECONDS * 1000 + 5_000)).text).toBe(reply);
      expect(Date.now() - answered).toBeGreaterThan(SETUP_SECONDS * 1000 - 1_000);
    } finally {
      idle.close();
      talking.close();
    }
  });

  it('idle strangers fill only the pool before DATA: a message under way is finished, and a new sender pushes out the one waiting longest', async () => {
    const underway = await atData('127.0.0.4');
    let first: Opened[] = [];
    let rest: Opened[] = [];
    try {
      first = await openMany(inbound(), '127.0.2.10', PER_ADDRESS);
      rest = await strangersFrom('127.0.2', 11, 15, inbound());
      expect(rest).toHaveLength(MAX_INBOUND_SETTING_UP);
      expect(greeted([...first, ...rest])).toBe(MAX_INBOUND_SETTING_UP + PER_ADDRESS);
      for (const o of first)
        expect((await o.smtp.read(2_000)).text).toMatch(
          /^421 4\.7\.0 too many connections waiting; this one has waited the longest/,
        );

      expect((await underway.data(notAReport)).text).toMatch(/^550 5\.7\.1 /);
      const sender = await atData('127.0.0.5');
      expect((await sender.data(notAReport)).text).toMatch(/^550 5\.7\.1 /);
      sender.close();
      expect(await pushedOut(rest)).toBe(1);
    } finally {
      underway.close();
      closeAll(first);
      closeAll(rest);
    }
  });
});

describe('behind a TCP proxy that sends the PROXY protocol', () => {
  /** A connection through the proxy for `client`: the header first, then the greeting (or a 421). */
  async function through(listener: { host: string; port: number }, client: string): Promise<Opened> {
    const smtp = await SmtpConversation.open(listener.host, listener.port, PROXY);
    return { smtp, first: await smtp.command(`PROXY TCP4 ${client} ${listener.host} 40000 ${listener.port}`) };
  }

  it('counts each client as the address its header names, on both listeners; from anyone else a header is an unknown command', async () => {
    for (const listener of [submission(), inbound()]) {
      const opened: Opened[] = [];
      try {
        for (let i = 0; i < PER_ADDRESS + 1; i++) opened.push(await through(listener, '203.0.113.7'));
        opened.push(await through(listener, '203.0.113.8'));
        expect(opened.map((o) => o.first.code)).toEqual([...Array<number>(PER_ADDRESS).fill(220), 421, 220]);
        expect(refusedPerAddress(opened)).toBe(1);

        // From anyone else, the header is a command the listener does not know.
        const other = await SmtpConversation.open(listener.host, listener.port, '127.0.0.10');
        opened.push({ smtp: other, first: await other.read() });
        expect(opened.at(-1)!.first.code).toBe(220);
        expect((await other.command(`PROXY TCP4 203.0.113.9 ${listener.host} 40000 ${listener.port}`)).text).toMatch(
          /^500 /,
        );
      } finally {
        closeAll(opened);
      }
    }
  });
});
