import dgram from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { resolveMxRoute } from '../../src/delivery/transport/direct/mx-route.js';
import {
  ABSENT_TTL_S,
  createCachingResolver,
  MAX_TTL_S,
  MIN_TTL_S,
  parseServer,
} from '../../src/net/caching-resolver.js';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.js';

/** Delivery's MX cache against the tests' real DNS server: the queries it makes are counted there. */

let dns: DnsServer;
let clock: number;

beforeAll(async () => {
  dns = await startDnsServer();
});
afterAll(async () => {
  await dns?.close();
});
beforeEach(() => {
  clock = Date.parse('2026-11-28T08:00:00Z');
  dns.queries.length = 0;
  dns.ttls.clear();
  dns.failing.clear();
});

const resolver = () => createCachingResolver([dns.servers], { now: () => clock, timeoutMs: 1000 });
const asked = (question: string) => dns.queries.filter((q) => q === question).length;

describe('the caching resolver', () => {
  it('serves an MX answer from the cache until its TTL has passed, then asks again', async () => {
    dns.set('ttl.test', 'MX', [{ exchange: 'mx1.ttl.test', priority: 10 }]);
    dns.ttls.set('ttl.test MX', 300);
    const cache = resolver();
    expect(await cache.resolveMx('ttl.test')).toEqual([{ exchange: 'mx1.ttl.test', priority: 10 }]);
    dns.set('ttl.test', 'MX', [{ exchange: 'mx2.ttl.test', priority: 20 }]);
    clock += 299_000;
    expect(await cache.resolveMx('TTL.test.')).toEqual([{ exchange: 'mx1.ttl.test', priority: 10 }]);
    expect(asked('ttl.test MX')).toBe(1);
    clock += 2_000;
    expect(await cache.resolveMx('ttl.test')).toEqual([{ exchange: 'mx2.ttl.test', priority: 20 }]);
    expect(asked('ttl.test MX')).toBe(2);
  });

  it('caches A and AAAA answers for their own TTLs', async () => {
    dns.set('host.ttl.test', 'A', ['192.0.2.1', '192.0.2.2']);
    dns.set('host.ttl.test', 'AAAA', ['2001:db8::1']);
    dns.ttls.set('host.ttl.test A', 30);
    dns.ttls.set('host.ttl.test AAAA', 120);
    const cache = resolver();
    expect(await cache.resolve4('host.ttl.test')).toEqual(['192.0.2.1', '192.0.2.2']);
    expect(await cache.resolve6('host.ttl.test')).toEqual(['2001:db8::1']);
    clock += 31_000;
    await cache.resolve4('host.ttl.test');
    await cache.resolve6('host.ttl.test');
    expect(asked('host.ttl.test A')).toBe(2);
    expect(asked('host.ttl.test AAAA')).toBe(1);
  });

  it(`holds a TTL to at least ${MIN_TTL_S} s and at most ${MAX_TTL_S} s`, async () => {
    dns.set('short.ttl.test', 'A', ['192.0.2.3']);
    dns.ttls.set('short.ttl.test A', 0);
    dns.set('long.ttl.test', 'A', ['192.0.2.4']);
    dns.ttls.set('long.ttl.test A', 7 * 86_400);
    const cache = resolver();
    await cache.resolve4('short.ttl.test');
    await cache.resolve4('long.ttl.test');
    clock += MIN_TTL_S * 1000 - 1;
    await cache.resolve4('short.ttl.test');
    expect(asked('short.ttl.test A')).toBe(1);
    clock += 2;
    await cache.resolve4('short.ttl.test');
    expect(asked('short.ttl.test A')).toBe(2);
    clock += MAX_TTL_S * 1000;
    await cache.resolve4('long.ttl.test');
    expect(asked('long.ttl.test A')).toBe(2);
  });

  it(`keeps an absence (NXDOMAIN, or no record of the type) for ${ABSENT_TTL_S} s`, async () => {
    dns.remove('gone.ttl.test');
    dns.set('nodata.ttl.test', 'A', ['192.0.2.5']);
    const cache = resolver();
    expect(await cache.resolveMx('gone.ttl.test')).toEqual([]);
    expect(await cache.resolveMx('nodata.ttl.test')).toEqual([]);
    dns.set('gone.ttl.test', 'MX', [{ exchange: 'mx.gone.ttl.test', priority: 1 }]);
    dns.set('nodata.ttl.test', 'MX', [{ exchange: 'mx.nodata.ttl.test', priority: 1 }]);
    clock += ABSENT_TTL_S * 1000 - 1;
    expect(await cache.resolveMx('gone.ttl.test')).toEqual([]);
    expect(await cache.resolveMx('nodata.ttl.test')).toEqual([]);
    clock += 2;
    expect(await cache.resolveMx('gone.ttl.test')).toEqual([{ exchange: 'mx.gone.ttl.test', priority: 1 }]);
    expect(await cache.resolveMx('nodata.ttl.test')).toEqual([{ exchange: 'mx.nodata.ttl.test', priority: 1 }]);
    expect(asked('gone.ttl.test MX')).toBe(2);
  });

  it('never keeps a failure: the next lookup asks again', async () => {
    dns.set('flaky.ttl.test', 'MX', [{ exchange: 'mx.flaky.ttl.test', priority: 5 }]);
    dns.failing.add('flaky.ttl.test');
    const cache = createCachingResolver([dns.servers], { now: () => clock, timeoutMs: 1000, tries: 1 });
    await expect(cache.resolveMx('flaky.ttl.test')).rejects.toMatchObject({ code: 'ESERVFAIL' });
    expect(asked('flaky.ttl.test MX')).toBe(1);
    dns.failing.delete('flaky.ttl.test');
    expect(await cache.resolveMx('flaky.ttl.test')).toEqual([{ exchange: 'mx.flaky.ttl.test', priority: 5 }]);
    expect(asked('flaky.ttl.test MX')).toBe(2);
  });

  it('a server that does not answer is a failure (ETIMEOUT), not an absence', async () => {
    const silent = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', () => resolve()));
    try {
      const port = (silent.address() as AddressInfo).port;
      const cache = createCachingResolver([`127.0.0.1:${port}`], { timeoutMs: 200, tries: 1 });
      await expect(cache.resolve4('anything.test')).rejects.toMatchObject({ code: 'ETIMEOUT' });
    } finally {
      silent.close();
    }
  });

  it('asks the next server when one fails', async () => {
    const silent = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', () => resolve()));
    try {
      dns.set('second.ttl.test', 'A', ['192.0.2.9']);
      const port = (silent.address() as AddressInfo).port;
      const cache = createCachingResolver([`127.0.0.1:${port}`, dns.servers], { timeoutMs: 200, tries: 1 });
      expect(await cache.resolve4('second.ttl.test')).toEqual(['192.0.2.9']);
    } finally {
      silent.close();
    }
  });

  it('shares one query among simultaneous lookups of a name', async () => {
    dns.set('busy.ttl.test', 'MX', [{ exchange: 'mx.busy.ttl.test', priority: 1 }]);
    const cache = resolver();
    const answers = await Promise.all(Array.from({ length: 8 }, () => cache.resolveMx('busy.ttl.test')));
    expect(answers.every((a) => a[0]?.exchange === 'mx.busy.ttl.test')).toBe(true);
    expect(asked('busy.ttl.test MX')).toBe(1);
  });

  it('joins TXT character strings as the uncached resolver does, and follows a CNAME for addresses', async () => {
    dns.set('_mta-sts.txt.ttl.test', 'TXT', [`v=STSv1; id=${'a'.repeat(300)}`]);
    dns.set('alias.ttl.test', 'CNAME', ['real.ttl.test']);
    dns.set('real.ttl.test', 'A', ['192.0.2.7']);
    const cache = resolver();
    expect(await cache.resolveTxt('_mta-sts.txt.ttl.test')).toEqual([`v=STSv1; id=${'a'.repeat(300)}`]);
    expect(await cache.resolve4('alias.ttl.test')).toEqual(['192.0.2.7']);
  });

  it('is what direct delivery routes with, unchanged (a null MX included)', async () => {
    dns.set('route.ttl.test', 'MX', [
      { exchange: 'mx2.route.ttl.test', priority: 20 },
      { exchange: 'mx1.route.ttl.test', priority: 10 },
    ]);
    dns.set('mx1.route.ttl.test', 'A', ['127.0.0.31']);
    dns.set('mx2.route.ttl.test', 'A', ['127.0.0.32']);
    dns.setNullMx('nullmx.ttl.test');
    const cache = resolver();
    const route = await resolveMxRoute('route.ttl.test', { resolver: cache, allowPrivate: true });
    expect(route).toEqual({
      ok: true,
      targets: [
        { exchange: 'mx1.route.ttl.test', address: '127.0.0.31' },
        { exchange: 'mx2.route.ttl.test', address: '127.0.0.32' },
      ],
      skipped: [],
    });
    const nullRoute = await resolveMxRoute('nullmx.ttl.test', { resolver: cache, allowPrivate: true });
    expect(nullRoute).toMatchObject({ ok: false, failure: { status: '5.1.10' } });
    await resolveMxRoute('route.ttl.test', { resolver: cache, allowPrivate: true });
    expect(asked('route.ttl.test MX')).toBe(1);
    expect(asked('mx1.route.ttl.test A')).toBe(1);
  });
});

describe('parseServer', () => {
  it('reads host, host:port, [v6]:port and a bare v6 address', () => {
    expect(parseServer('192.0.2.53')).toEqual({ host: '192.0.2.53', port: 53 });
    expect(parseServer('127.0.0.1:5353')).toEqual({ host: '127.0.0.1', port: 5353 });
    expect(parseServer('[::1]:5353')).toEqual({ host: '::1', port: 5353 });
    expect(parseServer('[2001:db8::53]')).toEqual({ host: '2001:db8::53', port: 53 });
    expect(parseServer('2001:db8::53')).toEqual({ host: '2001:db8::53', port: 53 });
  });
});
