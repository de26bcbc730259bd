import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { SourceAddress } from '../../src/domain/entities/egress.js';
import {
  createSitePools,
  SiteQueueFull,
  type PooledSend,
  type SitePools,
} from '../../src/delivery/transport/direct/site-pool.js';
import type { BuiltMessage } from '../../src/delivery/transport/send-built.js';
import { startMxHosts, type MxHostSpec, type MxNetwork } from '../helpers/mx-servers.js';

// Direct delivery's connection pool against real smtp-server hosts on 127.0.0.x (Linux routes all of 127/8 to
// loopback, so binding to 127.0.0.5 needs no setup): per-site connection cap, messages per connection, the
// bound source address and its EHLO name, the bounded site queue.

let network: MxNetwork | undefined;
let pools: SitePools | undefined;
afterEach(async () => {
  pools?.close();
  pools = undefined;
  await network?.close();
  network = undefined;
});

const slow = (ms: number) => () => new Promise<undefined>((r) => setTimeout(() => r(undefined), ms));

async function setUp(specs: MxHostSpec[], shape: { connectionLimit: number; messagesPerConnection: number }) {
  network = await startMxHosts(specs);
  const changes: number[] = [];
  let open = 0;
  pools = createSitePools({
    port: network.port,
    name: 'mailer.test',
    idleMs: 30_000,
    shapeOf: () => shape,
    connectionsChanged: (_site, delta) => {
      open += delta;
      changes.push(open);
    },
    logger: pino({ level: 'silent' }),
  });
  return { hosts: network.hosts, pools, changes };
}

let counter = 0;
const mail = (to: string): BuiltMessage => {
  counter++;
  return {
    envelope: { from: 'b@sender.test', to: [to] },
    messageId: `<pool-${counter}@mailer.test>`,
    raw: Buffer.from(`Subject: ${counter}\r\n\r\nx\r\n`),
  };
};

const source = (address: string, ehlo: string): SourceAddress => ({ address, ehlo, warmup: null });
const to = (site: string, address: string, exchange: string, src: SourceAddress | null = null): PooledSend => ({
  site,
  target: { exchange, address },
  source: src,
  tls: 'opportunistic',
});

describe('site pools', () => {
  it('bind each connection to the source address with its EHLO name', async () => {
    const { hosts, pools } = await setUp([{ address: '127.0.0.2' }], { connectionLimit: 2, messagesPerConnection: 10 });
    await pools.send(to('s', '127.0.0.2', 'mx.s.test', source('127.0.0.5', 'mta5.sender.test')), mail('a@s.test'));
    await pools.send(to('s', '127.0.0.2', 'mx.s.test'), mail('b@s.test'));
    expect(hosts[0]?.received.map((r) => [r.source, r.ehlo])).toEqual([
      ['127.0.0.5', 'mta5.sender.test'],
      ['127.0.0.1', 'mailer.test'],
    ]);
  });

  it('never open more than the connection limit per site, over two MX addresses and two sources', async () => {
    const specs = [
      { address: '127.0.0.2', data: slow(60) },
      { address: '127.0.0.3', data: slow(60) },
    ];
    const { hosts, pools, changes } = await setUp(specs, { connectionLimit: 3, messagesPerConnection: 4 });
    const sources = [source('127.0.0.6', 'a.test'), source('127.0.0.7', 'b.test')];
    // At most 12 wait (4 x 3): 15 at once (3 in flight) in two waves so none is refused, to either MX from either source.
    const wave = (n: number) =>
      Promise.all(
        Array.from({ length: n }, (_, i) =>
          pools.send(
            to('site', i % 2 === 0 ? '127.0.0.2' : '127.0.0.3', 'mx.site.test', sources[(i >> 1) % 2] ?? null),
            mail(`u${i}@site.test`),
          ),
        ),
      );
    // What the two hosts see open together, sampled while the waves run.
    let together = 0;
    const sampler = setInterval(() => {
      together = Math.max(
        together,
        hosts.reduce((n, h) => n + h.open, 0),
      );
    }, 2);
    await wave(15);
    await wave(15);
    clearInterval(sampler);
    expect(together).toBeGreaterThan(0);
    expect(together).toBeLessThanOrEqual(3);
    const received = (hosts[0]?.received.length ?? 0) + (hosts[1]?.received.length ?? 0);
    expect(received).toBe(30);
    // The pool's own count (what the shaper is told) never passed 3 either.
    expect(Math.max(...changes)).toBe(3);
    expect(hosts[0]?.maxOpen ?? 0).toBeLessThanOrEqual(3);
    expect(hosts[1]?.maxOpen ?? 0).toBeLessThanOrEqual(3);
    expect(pools.open('site')).toBeLessThanOrEqual(3);
  });

  it('carry at most messagesPerConnection transactions per connection', async () => {
    const { hosts, pools } = await setUp([{ address: '127.0.0.2' }], { connectionLimit: 1, messagesPerConnection: 3 });
    for (let i = 0; i < 7; i++) await pools.send(to('m', '127.0.0.2', 'mx.m.test'), mail(`u${i}@m.test`));
    expect(hosts[0]?.received).toHaveLength(7);
    // 3 + 3 + 1.
    expect(hosts[0]?.connections).toBe(3);
  });

  it('refuse a send beyond 4 x the limit waiting, and a slow site does not hold up another', async () => {
    const { hosts, pools } = await setUp([{ address: '127.0.0.2', data: slow(400) }, { address: '127.0.0.3' }], {
      connectionLimit: 1,
      messagesPerConnection: 100,
    });
    // 1 in flight + 4 waiting fill the slow site; the sixth is refused at once, not queued.
    let slowSent = 0;
    const slowSends = Array.from({ length: 6 }, (_, i) =>
      pools.send(to('slow', '127.0.0.2', 'mx.slow.test'), mail(`s${i}@slow.test`)).then(
        () => {
          slowSent++;
          return 'sent';
        },
        (err: unknown) => (err instanceof SiteQueueFull ? err.message : String(err)),
      ),
    );
    await pools.send(to('fast', '127.0.0.3', 'mx.fast.test'), mail('f@fast.test'));
    // Sent before the slow site finished even its first message: it waited behind none of them.
    expect(slowSent).toBe(0);
    expect(hosts[1]?.received).toHaveLength(1);
    const outcomes = await Promise.all(slowSends);
    expect(outcomes.filter((o) => o === 'sent')).toHaveLength(5);
    expect(outcomes.filter((o) => o !== 'sent')).toEqual(['4.4.5 held by egress shaping: site slow queue full']);
    expect(hosts[0]?.maxOpen).toBe(1);
  });

  it('close an idle connection of another address to make room at the site', async () => {
    const { hosts, pools } = await setUp([{ address: '127.0.0.2' }, { address: '127.0.0.3' }], {
      connectionLimit: 1,
      messagesPerConnection: 100,
    });
    await pools.send(to('x', '127.0.0.2', 'mx1.x.test'), mail('a@x.test'));
    await pools.send(to('x', '127.0.0.3', 'mx2.x.test'), mail('b@x.test'));
    expect(pools.open('x')).toBe(1);
    await new Promise((r) => setTimeout(r, 200));
    expect(hosts[0]?.open).toBe(0);
    expect(hosts[1]?.open).toBe(1);
  });
});
