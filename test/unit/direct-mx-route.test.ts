import { describe, expect, it } from 'vitest';
import { MAX_TARGETS, orderMx, resolveMxRoute } from '../../src/delivery/transport/direct/mx-route.js';
import { fakeDnsResolver } from '../helpers/fake-dns-resolver.js';

const PUBLIC = { a: ['198.51.99.1'], b: ['198.51.99.2'], c: ['198.51.99.3'] };

describe('orderMx', () => {
  it('orders by preference, lowest first, each host once and without its trailing dot', () => {
    const records = [
      { exchange: 'backup.example.', priority: 20 },
      { exchange: 'MX1.example', priority: 5 },
      { exchange: 'mx1.example.', priority: 5 },
    ];
    expect(orderMx(records, () => 0)).toEqual(['mx1.example', 'backup.example']);
  });

  it('puts hosts of equal preference in random order, never ahead of a better preference', () => {
    const records = [
      { exchange: 'a', priority: 10 },
      { exchange: 'b', priority: 10 },
      { exchange: 'c', priority: 10 },
      { exchange: 'z', priority: 1 },
      { exchange: 'last', priority: 50 },
    ];
    const seen = new Set<string>();
    let seed = 1;
    const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
    for (let i = 0; i < 60; i++) {
      const order = orderMx(records, random);
      expect(order[0]).toBe('z');
      expect(order[4]).toBe('last');
      seen.add(order.slice(1, 4).join(','));
    }
    expect(seen.size).toBe(6);
  });
});

describe('resolveMxRoute', () => {
  it('lists every MX address in preference order, IPv4 before IPv6, one attempt per address', async () => {
    const resolver = fakeDnsResolver({
      mx: {
        'example.com': [
          { exchange: 'mx2.example.com', priority: 20 },
          { exchange: 'mx1.example.com', priority: 10 },
          { exchange: 'alias.example.com', priority: 30 },
        ],
      },
      a: { 'mx1.example.com': PUBLIC.a, 'mx2.example.com': PUBLIC.b, 'alias.example.com': PUBLIC.a },
      aaaa: { 'mx1.example.com': ['2001:4860::1'] },
    });
    const route = await resolveMxRoute('example.com', { resolver, allowPrivate: false });
    expect(route).toEqual({
      ok: true,
      skipped: [],
      targets: [
        { exchange: 'mx1.example.com', address: '198.51.99.1' },
        { exchange: 'mx1.example.com', address: '2001:4860::1' },
        { exchange: 'mx2.example.com', address: '198.51.99.2' },
      ],
    });
  });

  it("falls back to the domain's own A/AAAA records when it has no MX (implicit MX)", async () => {
    const resolver = fakeDnsResolver({ a: { 'plain.example': PUBLIC.c }, aaaa: { 'plain.example': ['2001:4860::3'] } });
    const route = await resolveMxRoute('plain.example', { resolver, allowPrivate: false });
    expect(route).toEqual({
      ok: true,
      skipped: [],
      targets: [
        { exchange: 'plain.example', address: '198.51.99.3' },
        { exchange: 'plain.example', address: '2001:4860::3' },
      ],
    });
    expect(resolver.lookups).toContain('MX plain.example');
  });

  it('refuses a null MX permanently (556 5.1.10) without looking up any address', async () => {
    for (const exchange of ['', '.']) {
      const resolver = fakeDnsResolver({
        mx: { 'nomail.example': [{ exchange, priority: 0 }] },
        a: { 'nomail.example': PUBLIC.a },
      });
      const route = await resolveMxRoute('nomail.example', { resolver, allowPrivate: false });
      expect(route).toMatchObject({ ok: false, failure: { kind: 'hard', code: 556, status: '5.1.10' } });
      expect(resolver.lookups).toEqual(['MX nomail.example']);
    }
  });

  it('delivers to the real hosts when a null MX is (wrongly) published beside them', async () => {
    const resolver = fakeDnsResolver({
      mx: {
        'mixed.example': [
          { exchange: '', priority: 0 },
          { exchange: 'mx.mixed.example', priority: 10 },
        ],
      },
      a: { 'mx.mixed.example': PUBLIC.a },
    });
    expect(await resolveMxRoute('mixed.example', { resolver, allowPrivate: false })).toMatchObject({
      ok: true,
      targets: [{ exchange: 'mx.mixed.example' }],
    });
  });
});

describe('resolveMxRoute', () => {
  it('refuses a domain with no MX and no address (5.1.2) and MX hosts without addresses (5.4.4)', async () => {
    const resolver = fakeDnsResolver({ mx: { 'dangling.example': [{ exchange: 'gone.example', priority: 10 }] } });
    expect(await resolveMxRoute('nowhere.example', { resolver, allowPrivate: false })).toMatchObject({
      ok: false,
      failure: { kind: 'hard', status: '5.1.2' },
    });
    expect(await resolveMxRoute('dangling.example', { resolver, allowPrivate: false })).toMatchObject({
      ok: false,
      failure: { kind: 'hard', status: '5.4.4' },
    });
  });

  it('defers (4.4.3) when the resolver fails for the MX lookup, the implicit A lookup or every MX host', async () => {
    const failingMx = fakeDnsResolver({ failing: ['broken.example'] });
    expect(await resolveMxRoute('broken.example', { resolver: failingMx, allowPrivate: false })).toMatchObject({
      ok: false,
      failure: { kind: 'soft', status: '4.4.3' },
    });
    const failingHost = fakeDnsResolver({
      mx: { 'x.example': [{ exchange: 'mx.x.example', priority: 1 }] },
      failing: ['mx.x.example'],
    });
    expect(await resolveMxRoute('x.example', { resolver: failingHost, allowPrivate: false })).toMatchObject({
      ok: false,
      failure: { kind: 'soft', status: '4.4.3' },
    });
  });

  it("keeps the hosts that resolve when another MX host's lookup fails, and says why that one was skipped", async () => {
    const resolver = fakeDnsResolver({
      mx: {
        'x.example': [
          { exchange: 'bad.x.example', priority: 1 },
          { exchange: 'good.x.example', priority: 2 },
        ],
      },
      a: { 'good.x.example': PUBLIC.b },
      failing: ['bad.x.example'],
    });
    const route = await resolveMxRoute('x.example', { resolver, allowPrivate: false });
    expect(route).toMatchObject({
      ok: true,
      targets: [{ exchange: 'good.x.example', address: '198.51.99.2' }],
      skipped: [{ kind: 'soft', status: '4.4.3' }],
    });
  });

  it('never targets loopback, private or link-local addresses unless allowed; a domain with only those is deferred', async () => {
    const resolver = fakeDnsResolver({
      mx: {
        'inside.example': [
          { exchange: 'lo.inside.example', priority: 1 },
          { exchange: 'lan.inside.example', priority: 2 },
        ],
      },
      a: { 'lo.inside.example': ['127.0.0.1'], 'lan.inside.example': ['10.1.2.3', '169.254.169.254'] },
      aaaa: { 'lo.inside.example': ['::1'], 'lan.inside.example': ['fe80::1'] },
    });
    const refused = await resolveMxRoute('inside.example', { resolver, allowPrivate: false });
    expect(refused).toMatchObject({ ok: false, failure: { kind: 'soft', code: 0 } });
    expect((refused as { failure: { diagnostic: string } }).failure.diagnostic).toMatch(/fe80::1.*private/);
    const allowed = await resolveMxRoute('inside.example', { resolver, allowPrivate: true });
    expect(allowed.ok && allowed.targets.map((t) => t.address)).toEqual([
      '127.0.0.1',
      '::1',
      '10.1.2.3',
      '169.254.169.254',
      'fe80::1',
    ]);
  });

  it('skips private targets but still routes to the public ones', async () => {
    const resolver = fakeDnsResolver({
      mx: {
        'm.example': [
          { exchange: 'lo.m.example', priority: 1 },
          { exchange: 'pub.m.example', priority: 2 },
        ],
      },
      a: { 'lo.m.example': ['127.0.0.2'], 'pub.m.example': PUBLIC.a },
    });
    const route = await resolveMxRoute('m.example', { resolver, allowPrivate: false });
    expect(route).toMatchObject({ ok: true, targets: [{ exchange: 'pub.m.example' }], skipped: [{ kind: 'soft' }] });
  });

  it('tries at most MAX_TARGETS addresses', async () => {
    const many = Array.from({ length: 8 }, (_, i) => `198.51.99.${i + 10}`);
    const resolver = fakeDnsResolver({ a: { 'big.example': many } });
    const route = await resolveMxRoute('big.example', { resolver, allowPrivate: false });
    expect(route.ok && route.targets.map((t) => t.address)).toEqual(many.slice(0, MAX_TARGETS));
  });
});
