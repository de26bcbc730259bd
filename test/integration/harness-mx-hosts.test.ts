import nodemailer from 'nodemailer';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startMxHosts, type MxHosts } from '../helpers/mx-hosts.js';

/** A client as direct delivery is one: opportunistic STARTTLS, no certificate check, a name in EHLO. */
async function send(
  hosts: MxHosts,
  ip: string,
  envelope: { from: string; to: string[] },
  options: { ignoreTLS?: boolean } = {},
) {
  const transport = nodemailer.createTransport({
    host: ip,
    port: hosts.port,
    name: 'mail.mailer.test',
    ignoreTLS: options.ignoreTLS ?? false,
    tls: { rejectUnauthorized: false },
    connectionTimeout: 5000,
  });
  try {
    return await transport.sendMail({
      envelope,
      raw: `From: a@sender.test\r\nTo: ${envelope.to.join(', ')}\r\nSubject: hi\r\nMessage-ID: <${Date.now()}@sender.test>\r\n\r\nhello\r\n`,
    });
  } finally {
    transport.close();
  }
}

describe('the MX host sinks', () => {
  let hosts: MxHosts;
  beforeAll(async () => {
    hosts = await startMxHosts(3);
  });
  afterEach(async () => {
    await hosts.reset();
  });
  afterAll(async () => {
    await hosts?.close();
  });

  it('listen on 127.0.0.2, .3 and .4 on one port, and record envelope, client address, EHLO name and TLS', async () => {
    expect(hosts.hosts.map((h) => h.ip)).toEqual(['127.0.0.2', '127.0.0.3', '127.0.0.4']);
    for (const host of hosts.hosts) {
      const info = await send(hosts, host.ip, { from: 'b-x@rp.sender.test', to: [`rcpt@${host.ip}.test`] });
      expect(info.response).toMatch(
        new RegExp(`^250 2\\.0\\.0 Ok: queued as \\w+ at ${host.ip.replace(/\./g, '\\.')}$`),
      );
      expect(host.messages).toHaveLength(1);
      expect(host.messages[0]).toMatchObject({
        host: host.ip,
        envelopeFrom: 'b-x@rp.sender.test',
        envelopeTo: [`rcpt@${host.ip}.test`],
        remoteAddress: '127.0.0.1',
        helo: 'mail.mailer.test',
        secure: true,
        reply: info.response,
      });
      expect(host.messages[0]!.raw.toString()).toContain('Subject: hi');
    }
    expect(hosts.messages()).toHaveLength(3);
  });

  it('without STARTTLS offered, the session stays in plain text', async () => {
    const host = hosts.host('127.0.0.3');
    host.tls = false;
    await send(hosts, host.ip, { from: 'plain@sender.test', to: ['plain@x.test'] });
    expect((await hosts.waitForMessage((m) => m.envelopeFrom === 'plain@sender.test', 5000)).secure).toBe(false);
    host.tls = true;
    await send(hosts, host.ip, { from: 'tls-again@sender.test', to: ['plain@x.test'] });
    expect((await hosts.waitForMessage((m) => m.envelopeFrom === 'tls-again@sender.test', 5000)).secure).toBe(true);
  });

  it('refuse: every recipient gets 550 5.1.1; refuseRecipient refuses one address on an accepting host', async () => {
    const host = hosts.host('127.0.0.2');
    await host.setBehaviour('refuse');
    await expect(send(hosts, host.ip, { from: 'r@sender.test', to: ['nobody@x.test'] })).rejects.toMatchObject({
      responseCode: 550,
      response: expect.stringMatching(/^550 5\.1\.1 /),
    });
    await host.setBehaviour('accept');
    host.refuseRecipient = (a) => (a === 'gone@x.test' ? '550 5.1.1 <gone@x.test>: no such user' : undefined);
    const info = await send(hosts, host.ip, { from: 'r2@sender.test', to: ['gone@x.test', 'here@x.test'] });
    expect(info.accepted).toEqual(['here@x.test']);
    expect(info.rejected).toEqual(['gone@x.test']);
    expect(host.attempts.filter((a) => a.envelopeFrom === 'r2@sender.test').map((a) => a.reply.slice(0, 3))).toEqual([
      '550',
      '250',
    ]);
  });

  it('greylist: 451 4.7.1 for the first attempt of each sender and recipient, accepted on the next', async () => {
    const host = hosts.host('127.0.0.4');
    await host.setBehaviour('greylist');
    const envelope = { from: 'grey@sender.test', to: ['grey@x.test'] };
    await expect(send(hosts, host.ip, envelope)).rejects.toMatchObject({
      responseCode: 451,
      response: expect.stringMatching(/^451 4\.7\.1 /),
    });
    const mine = () => host.messages.filter((m) => m.envelopeFrom === envelope.from);
    expect(mine()).toHaveLength(0);
    await send(hosts, host.ip, envelope);
    expect(mine()).toHaveLength(1);
    // Another sender (another email's return path) is greylisted afresh.
    await expect(send(hosts, host.ip, { from: 'grey2@sender.test', to: ['grey@x.test'] })).rejects.toMatchObject({
      responseCode: 451,
    });
  });

  it('down: connections are refused; back up, it accepts again on the same port', async () => {
    const host = hosts.host('127.0.0.2');
    await host.setBehaviour('down');
    await expect(send(hosts, host.ip, { from: 'd@sender.test', to: ['d@x.test'] })).rejects.toMatchObject({
      code: 'ESOCKET',
    });
    await expect(send(hosts, '127.0.0.3', { from: 'd@sender.test', to: ['d@x.test'] })).resolves.toMatchObject({
      accepted: ['d@x.test'],
    });
    await host.setBehaviour('accept');
    await expect(send(hosts, host.ip, { from: 'd2@sender.test', to: ['d@x.test'] })).resolves.toMatchObject({
      accepted: ['d@x.test'],
    });
  });
});
