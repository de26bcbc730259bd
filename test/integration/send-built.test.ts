import type { AddressInfo } from 'node:net';
import nodemailer from 'nodemailer';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendBuilt } from '../../src/delivery/transport/send-built.js';

/** What a real SMTP server received: each transaction's envelope and bytes. */
const received: { from: string; to: string[]; raw: Buffer }[] = [];
let server: SMTPServer;
let port = 0;

beforeAll(async () => {
  server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, callback) {
      callback(
        address.address.startsWith('nobody@')
          ? Object.assign(new Error('550 5.1.1 no such user'), { responseCode: 550 })
          : undefined,
      );
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push({
          from: String(session.envelope.mailFrom && session.envelope.mailFrom.address),
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks),
        });
        callback(null, 'queued as X1');
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const transporter = () =>
  nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    pool: true,
    maxConnections: 2,
    ignoreTLS: true,
    logger: false,
  });

describe('sendBuilt: a built message through a pooled nodemailer transport', () => {
  it('puts the exact bytes on the wire, dot-stuffed and unstuffed, to the envelope given', async () => {
    const raw = Buffer.from(
      'Subject: dots\r\nMessage-ID: <b1@mailer.test>\r\n\r\n.leading dot\r\n..two\r\nlast line\r\n',
    );
    const t = transporter();
    try {
      const info = await sendBuilt(t, {
        envelope: { from: 'bounce@rp.mailer.test', to: ['a@one.test', 'b@two.test'] },
        messageId: '<b1@mailer.test>',
        raw,
      });
      expect(info.accepted).toEqual(['a@one.test', 'b@two.test']);
      expect(info.response).toMatch(/^250 .*queued as X1/);
      const got = received.at(-1)!;
      expect(got.from).toBe('bounce@rp.mailer.test');
      expect(got.to).toEqual(['a@one.test', 'b@two.test']);
      expect(got.raw.equals(raw)).toBe(true);
    } finally {
      t.close();
    }
  });

  it('puts the envelope on the wire as sendMail does: domains in lower case, each recipient once', async () => {
    const t = transporter();
    try {
      const raw = Buffer.from('Subject: envelope\r\n\r\nx\r\n');
      const envelope = { from: 'b@RP.mailer.test', to: ['B@ONE.test', 'u@bücher.test', 'B@one.test'] };
      await t.sendMail({ envelope, raw });
      const bySendMail = received.at(-1)!;
      await sendBuilt(t, { envelope, messageId: '<b4@mailer.test>', raw });
      const byBuilt = received.at(-1)!;
      expect(byBuilt.to).toEqual(['B@one.test', 'u@bücher.test']);
      expect([byBuilt.from, byBuilt.to]).toEqual([bySendMail.from, bySendMail.to]);
    } finally {
      t.close();
    }
  });

  it('reports a refused recipient as sendMail does, and sends to the others', async () => {
    const raw = Buffer.from('Subject: one refused\r\n\r\nx\r\n');
    const t = transporter();
    try {
      const info = await sendBuilt(t, {
        envelope: { from: 'b@rp.mailer.test', to: ['nobody@one.test', 'c@one.test'] },
        messageId: '<b2@mailer.test>',
        raw,
      });
      expect(info.accepted).toEqual(['c@one.test']);
      expect(info.rejected).toEqual(['nobody@one.test']);
      expect((info.rejectedErrors ?? [])[0]).toMatchObject({ responseCode: 550 });
      await expect(
        sendBuilt(t, {
          envelope: { from: 'b@rp.mailer.test', to: ['nobody@one.test'] },
          messageId: '<b3@mailer.test>',
          raw,
        }),
      ).rejects.toMatchObject({ code: 'EENVELOPE', responseCode: 550 });
    } finally {
      t.close();
    }
  });

  it('sends many concurrently over the pool, each its own bytes', async () => {
    const t = transporter();
    const before = received.length;
    try {
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          sendBuilt(t, {
            envelope: { from: 'b@rp.mailer.test', to: [`u${i}@one.test`] },
            messageId: `<c${i}@mailer.test>`,
            raw: Buffer.from(`Subject: ${i}\r\n\r\nbody ${i}\r\n`),
          }),
        ),
      );
      const got = received.slice(before);
      expect(got).toHaveLength(20);
      for (const g of got)
        expect(g.raw.toString()).toBe(`Subject: ${g.to[0]!.slice(1, -9)}\r\n\r\nbody ${g.to[0]!.slice(1, -9)}\r\n`);
    } finally {
      t.close();
    }
  });
});
