import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createDirectTransport,
  type DirectTransportOptions,
} from '../../src/delivery/transport/direct/direct-transport.js';
import type { BuiltMessage } from '../../src/delivery/transport/send-built.js';
import type { MailTransport } from '../../src/delivery/transport/transport.js';
import { fakeDnsResolver, type FakeZone } from '../helpers/fake-dns-resolver.js';
import { MX_TLS, startMxHosts, type MxHostSpec, type MxNetwork } from '../helpers/mx-servers.js';

// Real smtp-server MX hosts on loopback addresses 127.0.0.2, ... sharing one port; DNS is the seam (a fixed
// table of names to those addresses), so every SMTP exchange below is the real thing.

let network: MxNetwork | undefined;
let transport: MailTransport | undefined;
afterEach(async () => {
  transport?.close();
  transport = undefined;
  await network?.close();
  network = undefined;
});

async function setUp(specs: MxHostSpec[], zone: FakeZone, options: Partial<DirectTransportOptions> = {}) {
  network = await startMxHosts(specs);
  transport = createDirectTransport({
    resolver: fakeDnsResolver(zone),
    port: network.port,
    name: 'mailer.test',
    allowPrivate: true,
    logger: pino({ level: 'silent' }),
    random: () => 0,
    ...options,
  });
  return { hosts: network.hosts, transport };
}

let counter = 0;
/** A built message (what the delivery worker hands a transport) to `to`. */
function message(to: string[], subject = `message ${counter + 1}`): BuiltMessage {
  counter++;
  const messageId = `<direct-${counter}@mailer.test>`;
  const raw = `From: app@sender.test\r\nTo: ${to.join(', ')}\r\nSubject: ${subject}\r\nMessage-ID: ${messageId}\r\n\r\nhello\r\n`;
  return { messageId, envelope: { from: 'b-token@rp.sender.test', to }, raw: Buffer.from(raw) };
}

const waitUntil = async (check: () => boolean, timeoutMs = 15_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
};

describe('direct MX delivery against real SMTP servers', () => {
  it('delivers one message to two domains, each to its own MX (one by MX record, one by implicit MX)', async () => {
    const { hosts, transport } = await setUp([{ address: '127.0.0.2' }, { address: '127.0.0.3' }], {
      mx: { 'one.test': [{ exchange: 'mx.one.test', priority: 10 }] },
      a: { 'mx.one.test': ['127.0.0.2'], 'two.test': ['127.0.0.3'] },
    });
    const result = await transport.send(message(['a@one.test', 'c@two.test', 'B@ONE.test']));
    expect(result.refused).toEqual([]);
    expect(result.deferred).toEqual([]);
    expect(result.accepted.map((a) => [a.address, a.mx]).sort()).toEqual([
      ['B@ONE.test', 'mx.one.test'],
      ['a@one.test', 'mx.one.test'],
      ['c@two.test', 'two.test'],
    ]);
    for (const a of result.accepted) expect(a.response).toMatch(/^250 /);
    const [one, two] = hosts;
    // nodemailer writes the domain in lower case on the wire; the result keeps the address as the envelope had it.
    expect(one?.received.map((r) => r.envelopeTo)).toEqual([['a@one.test', 'B@one.test']]);
    expect(two?.received.map((r) => r.envelopeTo)).toEqual([['c@two.test']]);
    for (const copy of [one?.received[0], two?.received[0]]) {
      expect(copy?.envelopeFrom).toBe('b-token@rp.sender.test');
      expect(copy?.ehlo).toBe('mailer.test');
      expect(copy?.raw.toString()).toContain(`Message-ID: ${result.messageId}`);
    }
  });

  it('fails over to the next MX when the preferred one is not listening', async () => {
    const { hosts, transport } = await setUp([{ address: '127.0.0.3' }], {
      mx: {
        'failover.test': [
          { exchange: 'mx2.failover.test', priority: 20 },
          { exchange: 'mx1.failover.test', priority: 10 },
        ],
      },
      a: { 'mx1.failover.test': ['127.0.0.2'], 'mx2.failover.test': ['127.0.0.3'] },
    });
    const result = await transport.send(message(['x@failover.test']));
    expect(result.accepted).toEqual([
      {
        address: 'x@failover.test',
        response: expect.stringMatching(/^250 /),
        mx: 'mx2.failover.test',
        tls: { version: null, verified: false },
      },
    ]);
    expect(hosts[0]?.received).toHaveLength(1);
  });

  it('fails over on a 4xx for the whole transaction, and stops at a 5xx for the whole message', async () => {
    let backupReceived = 0;
    const { hosts, transport } = await setUp(
      [
        {
          address: '127.0.0.2',
          data: (raw) =>
            raw.toString().includes('Subject: busy')
              ? '451 4.3.0 try again later'
              : '554 5.7.1 message refused by policy',
        },
        {
          address: '127.0.0.3',
          data: () => {
            backupReceived++;
            return undefined;
          },
        },
      ],
      {
        mx: {
          'mx4.test': [
            { exchange: 'primary.mx4.test', priority: 1 },
            { exchange: 'backup.mx4.test', priority: 2 },
          ],
        },
        a: { 'primary.mx4.test': ['127.0.0.2'], 'backup.mx4.test': ['127.0.0.3'] },
      },
    );
    const busy = await transport.send(message(['a@mx4.test', 'b@mx4.test'], 'busy'));
    expect(busy.accepted.map((a) => a.mx)).toEqual(['backup.mx4.test', 'backup.mx4.test']);
    const refused = await transport.send(message(['a@mx4.test', 'b@mx4.test'], 'spam'));
    expect(refused.accepted).toEqual([]);
    expect(refused.refused.map((r) => [r.address, r.failure.kind, r.failure.code, r.failure.status])).toEqual([
      ['a@mx4.test', 'hard', 554, '5.7.1'],
      ['b@mx4.test', 'hard', 554, '5.7.1'],
    ]);
    expect(backupReceived).toBe(1);
    expect(hosts[1]?.received).toHaveLength(1);
  });

  it('defers every recipient on a greylisting 451 from the only MX, and delivers on the next send', async () => {
    const seen = new Set<string>();
    const { hosts, transport } = await setUp(
      [
        {
          address: '127.0.0.2',
          rcptTo: (to) => (seen.has(to) ? undefined : (seen.add(to), '451 4.7.1 greylisted, try again later')),
        },
      ],
      { mx: { 'grey.test': [{ exchange: 'mx.grey.test', priority: 0 }] }, a: { 'mx.grey.test': ['127.0.0.2'] } },
    );
    const first = await transport.send(message(['one@grey.test', 'two@grey.test']));
    expect(first.accepted).toEqual([]);
    expect(first.refused).toEqual([]);
    expect(first.deferred.map((d) => [d.address, d.failure.kind, d.failure.code, d.failure.status])).toEqual([
      ['one@grey.test', 'soft', 451, '4.7.1'],
      ['two@grey.test', 'soft', 451, '4.7.1'],
    ]);
    const retry = await transport.send(message(['one@grey.test', 'two@grey.test']));
    expect(retry.accepted.map((a) => a.address)).toEqual(['one@grey.test', 'two@grey.test']);
    expect(retry.deferred).toEqual([]);
    expect(hosts[0]?.received).toHaveLength(1);
  });
});

describe('direct MX delivery against real SMTP servers', () => {
  it('refuses the one recipient the MX refuses at RCPT and delivers to the others', async () => {
    const { hosts, transport } = await setUp(
      [
        {
          address: '127.0.0.2',
          rcptTo: (to) => (to.startsWith('nobody@') ? '550 5.1.1 no such user here' : undefined),
        },
      ],
      { mx: { 'users.test': [{ exchange: 'mx.users.test', priority: 5 }] }, a: { 'mx.users.test': ['127.0.0.2'] } },
    );
    const result = await transport.send(message(['alice@users.test', 'nobody@users.test', 'bob@users.test']));
    expect(result.accepted.map((a) => a.address)).toEqual(['alice@users.test', 'bob@users.test']);
    expect(result.refused).toEqual([
      { address: 'nobody@users.test', failure: expect.objectContaining({ kind: 'hard', code: 550, status: '5.1.1' }) },
    ]);
    expect(result.deferred).toEqual([]);
    expect(hosts[0]?.received[0]?.envelopeTo).toEqual(['alice@users.test', 'bob@users.test']);
  });

  it('uses STARTTLS when offered, with a self-signed certificate, giving the MX name as SNI', async () => {
    const { hosts, transport } = await setUp([{ address: '127.0.0.2', tls: MX_TLS }, { address: '127.0.0.3' }], {
      mx: {
        'tls.test': [{ exchange: 'mx.tls.test', priority: 1 }],
        'plain.test': [{ exchange: 'mx.plain.test', priority: 1 }],
      },
      a: { 'mx.tls.test': ['127.0.0.2'], 'mx.plain.test': ['127.0.0.3'] },
    });
    const result = await transport.send(message(['a@tls.test', 'b@plain.test']));
    expect(result.accepted).toHaveLength(2);
    expect(hosts[0]?.received.map((r) => [r.secure, r.servername])).toEqual([[true, 'mx.tls.test']]);
    expect(hosts[1]?.received.map((r) => r.secure)).toEqual([false]);
    // The TLS each recipient's copy went over: the version negotiated, the self-signed certificate not verified.
    const tlsOf = Object.fromEntries(result.accepted.map((a) => [a.address, a.tls]));
    expect(tlsOf).toEqual({
      'a@tls.test': { version: expect.stringMatching(/^TLSv1\.[23]$/), verified: false },
      'b@plain.test': { version: null, verified: false },
    });
  });

  it('falls back to plain text when the TLS handshake fails', async () => {
    const { hosts, transport } = await setUp(
      // A server stuck on TLS 1.0 offers STARTTLS, but Node (TLS 1.2 at least) cannot complete the handshake.
      [{ address: '127.0.0.2', tls: { ...MX_TLS, minVersion: 'TLSv1', maxVersion: 'TLSv1' } }],
      { mx: { 'oldtls.test': [{ exchange: 'mx.oldtls.test', priority: 1 }] }, a: { 'mx.oldtls.test': ['127.0.0.2'] } },
    );
    const result = await transport.send(message(['a@oldtls.test']));
    expect(result.accepted.map((a) => a.address)).toEqual(['a@oldtls.test']);
    expect(hosts[0]?.received.map((r) => r.secure)).toEqual([false]);
    // The failed handshake and the plain-text session; the next message reuses the latter, no new handshake.
    expect(hosts[0]?.connections).toBe(2);
    const again = await transport.send(message(['b@oldtls.test']));
    expect(again.accepted).toHaveLength(1);
    expect(hosts[0]?.connections).toBe(2);
  });
});

describe('direct MX delivery under an MTA-STS enforce policy', () => {
  const enforce = { policyFor: async () => ({ mode: 'enforce' as const, mx: ['mx.sts.test'], maxAgeSeconds: 86_400 }) };
  const zone = { mx: { 'sts.test': [{ exchange: 'mx.sts.test', priority: 1 }] }, a: { 'mx.sts.test': ['127.0.0.2'] } };

  it('never sends over a certificate that does not verify, nor falls back to plain text: deferred 4.7.5', async () => {
    const { hosts, transport } = await setUp([{ address: '127.0.0.2', tls: MX_TLS }], zone, { mtaSts: enforce });
    const result = await transport.send(message(['a@sts.test']));
    expect(result.accepted).toEqual([]);
    expect(result.deferred).toEqual([
      {
        address: 'a@sts.test',
        failure: expect.objectContaining({
          kind: 'soft',
          status: '4.7.5',
          diagnostic: expect.stringMatching(/MTA-STS/),
        }),
      },
    ]);
    expect(hosts[0]?.received).toEqual([]);
    // The one failed handshake; no plain-text session after it.
    expect(hosts[0]?.connections).toBe(1);
  });

  it('never sends to an MX that offers no STARTTLS', async () => {
    const { hosts, transport } = await setUp([{ address: '127.0.0.2' }], zone, { mtaSts: enforce });
    const result = await transport.send(message(['a@sts.test']));
    expect(result.deferred.map((d) => d.failure.status)).toEqual(['4.7.5']);
    expect(hosts[0]?.received).toEqual([]);
  });
});

describe('direct MX delivery against real SMTP servers', () => {
  it('reuses connections: several messages to one host take fewer connections than messages', async () => {
    const { hosts, transport } = await setUp([{ address: '127.0.0.2' }], {
      mx: {
        'reuse.test': [{ exchange: 'mx.reuse.test', priority: 1 }],
        'alias.test': [{ exchange: 'mx.reuse.test', priority: 1 }],
      },
      a: { 'mx.reuse.test': ['127.0.0.2'] },
    });
    for (let i = 0; i < 5; i++) {
      const result = await transport.send(message([`u${i}@${i % 2 === 0 ? 'reuse' : 'alias'}.test`]));
      expect(result.accepted).toHaveLength(1);
    }
    expect(hosts[0]?.received).toHaveLength(5);
    expect(hosts[0]?.connections).toBe(1);
  });

  it('holds the connection limit per destination host, across domains that share it', async () => {
    const { hosts, transport } = await setUp(
      [{ address: '127.0.0.2', data: () => new Promise((r) => setTimeout(() => r(undefined), 150)) }],
      {
        mx: Object.fromEntries(
          ['d1.test', 'd2.test', 'd3.test'].map((d) => [d, [{ exchange: 'shared-mx.test', priority: 1 }]]),
        ),
        a: { 'shared-mx.test': ['127.0.0.2'] },
      },
      { maxConnectionsPerHost: 2 },
    );
    const sends = Array.from({ length: 8 }, (_, i) => transport.send(message([`u${i}@d${(i % 3) + 1}.test`])));
    const results = await Promise.all(sends);
    expect(results.every((r) => r.accepted.length === 1)).toBe(true);
    expect(hosts[0]?.received).toHaveLength(8);
    expect(hosts[0]?.maxOpen).toBe(2);
    expect(hosts[0]?.connections).toBe(2);
  });

  it('closes idle connections after the idle time, and every connection on close()', async () => {
    const { hosts, transport } = await setUp(
      [{ address: '127.0.0.2' }, { address: '127.0.0.3' }],
      { a: { 'idle.test': ['127.0.0.2'], 'kept.test': ['127.0.0.3'] } },
      { idleMs: 300 },
    );
    await transport.send(message(['a@idle.test']));
    await waitUntil(() => hosts[0]?.open === 0);
    await transport.send(message(['b@idle.test', 'c@kept.test']));
    expect(hosts[0]?.connections).toBe(2);
    transport.close();
    await waitUntil(() => hosts[0]?.open === 0 && hosts[1]?.open === 0);
  });

  it('treats a private MX address as unreachable unless private targets are allowed', async () => {
    const { hosts, transport } = await setUp(
      [{ address: '127.0.0.2' }],
      { mx: { 'lo.test': [{ exchange: 'mx.lo.test', priority: 1 }] }, a: { 'mx.lo.test': ['127.0.0.2'] } },
      { allowPrivate: false },
    );
    const result = await transport.send(message(['a@lo.test']));
    expect(result.deferred).toEqual([
      { address: 'a@lo.test', failure: expect.objectContaining({ kind: 'soft', code: 0 }) },
    ]);
    expect(hosts[0]?.connections).toBe(0);
  });
});
