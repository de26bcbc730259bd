import { describe, expect, it } from 'vitest';
import { embeddedIPv4s, ipv6Groups } from '../../src/domain/embedded-ipv4.js';
import { resolveMxRoute } from '../../src/delivery/transport/direct/mx-route.js';
import { isPrivateAddress } from '../../src/net/private-address.js';
import { checkWebhookUrl } from '../../src/webhooks/address-guard.js';
import { guardedLookup, postWebhook } from '../../src/webhooks/post.js';
import { fakeDnsResolver } from '../helpers/fake-dns-resolver.js';

describe('ipv6Groups', () => {
  it.each([
    ['::', [0, 0, 0, 0, 0, 0, 0, 0]],
    ['::1', [0, 0, 0, 0, 0, 0, 0, 1]],
    ['2001:DB8::0:1', [0x2001, 0xdb8, 0, 0, 0, 0, 0, 1]],
    ['::ffff:127.0.0.1', [0, 0, 0, 0, 0, 0xffff, 0x7f00, 1]],
    ['0000:0000:0000:0000:0000:ffff:7f00:0001', [0, 0, 0, 0, 0, 0xffff, 0x7f00, 1]],
    ['1:2:3:4:5:6:1.2.3.4', [1, 2, 3, 4, 5, 6, 0x102, 0x304]],
    ['1:2:3:4:5:6:7::', [1, 2, 3, 4, 5, 6, 7, 0]],
  ])('%s', (text, groups) => {
    expect(ipv6Groups(text)).toEqual(groups);
  });

  it.each([
    '',
    ':',
    ':::',
    '1::2::3',
    '1:2:3:4:5:6:7:8:9',
    '1:2:3:4:5:6:7',
    '1:2:3:4:5:6:7:8::',
    ':1::2',
    '12345::',
    '::1.2.3',
    '::1.2.3.256',
    '::01.2.3.4',
    '1.2.3.4::',
    '::g',
    '1.2.3.4',
  ])('not an IPv6 address: %j', (text) => {
    expect(ipv6Groups(text)).toBeUndefined();
  });
});

describe('embeddedIPv4s', () => {
  it.each([
    ['::ffff:127.0.0.1', [{ form: 'ipv4-mapped', ipv4: '127.0.0.1' }]],
    ['::ffff:7f00:1', [{ form: 'ipv4-mapped', ipv4: '127.0.0.1' }]],
    ['::ffff:0:10.1.2.3', [{ form: 'ipv4-translated', ipv4: '10.1.2.3' }]],
    ['::127.0.0.1', [{ form: 'ipv4-compatible', ipv4: '127.0.0.1' }]],
    ['64:ff9b::169.254.169.254', [{ form: 'nat64', ipv4: '169.254.169.254' }]],
    ['2002:7f00:1::1', [{ form: '6to4', ipv4: '127.0.0.1' }]],
    // RFC 4380's own example: server 65.54.227.120, client 192.0.2.45 (the last 32 bits inverted).
    [
      '2001:0000:4136:e378:8000:63bf:3fff:fdd2',
      [
        { form: 'teredo-server', ipv4: '65.54.227.120' },
        { form: 'teredo-client', ipv4: '192.0.2.45' },
      ],
    ],
    ['2001:db8:1::5efe:10.0.0.1', [{ form: 'isatap', ipv4: '10.0.0.1' }]],
    ['2001:db8:1::200:5efe:8.8.8.8', [{ form: 'isatap', ipv4: '8.8.8.8' }]],
    ['2001:4860:4860::8888', []],
    ['fe80::1%eth0', []],
    ['not an address', []],
  ])('%s', (address, found) => {
    expect(embeddedIPv4s(address)).toEqual(found);
  });
});

/** Teredo's client field: the IPv4 address with every bit inverted (RFC 4380 4). */
const teredoClient = (ipv4: string) => {
  const [a, b, c, d] = ipv4.split('.').map((x) => Number(x) ^ 0xff) as [number, number, number, number];
  return `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
};

/** Every form an SSRF guard must see through, and their public twins it must let pass. */
const REFUSED: [string, string][] = [
  ['6to4 of 127.0.0.1', '2002:7f00:1::1'],
  ['6to4 of 10.0.0.1', '2002:a00:1::'],
  ['6to4 of the cloud metadata address', '2002:a9fe:a9fe::1'],
  ['6to4 of the 6to4 relay anycast', '2002:c058:6301::1'],
  ['IPv4-compatible 127.0.0.1 (dotted)', '::127.0.0.1'],
  ['IPv4-compatible 127.0.0.1 (hex)', '::7f00:1'],
  ['IPv4-compatible of a public address (deprecated form)', '::8.8.8.8'],
  ['IPv4-mapped 127.0.0.1 (dotted)', '::ffff:127.0.0.1'],
  ['IPv4-mapped 127.0.0.1 (hex)', '::ffff:7f00:1'],
  ['IPv4-mapped 127.0.0.1 (upper case, zeros written out)', '0000:0000:0000:0000:0000:FFFF:7F00:0001'],
  ['IPv4-mapped 10.0.0.1', '::ffff:10.0.0.1'],
  ['IPv4-translated 192.168.1.1', '::ffff:0:192.168.1.1'],
  ['Teredo with the client 127.0.0.1', `2001:0:4136:e378:8000:63bf:${teredoClient('127.0.0.1')}`],
  ['Teredo with the client 169.254.169.254', `2001:0:4136:e378:8000:63bf:${teredoClient('169.254.169.254')}`],
  ['Teredo with the server 10.0.0.1', `2001:0:a00:1:8000:63bf:${teredoClient('8.8.8.8')}`],
  ['Teredo of RFC 4380 (client in 192.0.2.0/24)', '2001:0000:4136:e378:8000:63bf:3fff:fdd2'],
  ['NAT64 of 127.0.0.1', '64:ff9b::7f00:1'],
  ['NAT64 of 10.0.0.1 (dotted)', '64:ff9b::10.0.0.1'],
  ['NAT64 of the cloud metadata address', '64:ff9b::a9fe:a9fe'],
  ['local-use NAT64 (RFC 8215), even of a public address', '64:ff9b:1::808:808'],
  ['ISATAP of 10.0.0.1', '2001:4860:1::5efe:a00:1'],
  ['loopback', '::1'],
  ['unspecified', '::'],
  ['link-local with a zone', 'fe80::1%eth0'],
  ['a global address with a zone', '2001:4860:4860::8888%eth0'],
  ['unique local', 'fd12:3456::1'],
  ['site-local (deprecated)', 'fec0::1'],
  ['benchmarking', '2001:2::1'],
  ['documentation', '2001:db8::1'],
  ['documentation (RFC 9637)', '3fff::1'],
  ['SRv6 SIDs', '5f00::1'],
  ['discard-only', '100::1'],
  ['multicast', 'ff02::1'],
  ['IPv4 loopback', '127.0.0.1'],
  ['IPv4 6to4 relay anycast', '192.88.99.1'],
  ['not an IP', 'example.com'],
];

const ALLOWED: [string, string][] = [
  ['Google public DNS', '2001:4860:4860::8888'],
  ['Cloudflare', '2606:4700:4700::1111'],
  ['a Gmail MX', '2a00:1450:4001::200e'],
  ['6to4 of a public address', '2002:808:808::1'],
  ['IPv4-mapped public (dotted)', '::ffff:8.8.8.8'],
  ['IPv4-mapped public (hex)', '::ffff:808:808'],
  ['IPv4-translated public', '::ffff:0:8.8.8.8'],
  ['NAT64 of a public address (DNS64 on an IPv6-only host)', '64:ff9b::8.8.8.8'],
  ['Teredo with a public server and client', `2001:0:4136:e378:8000:63bf:${teredoClient('8.8.8.8')}`],
  ['ISATAP of a public address', '2001:4860:1::200:5efe:808:808'],
  ['IPv4 public', '8.8.8.8'],
];

describe('isPrivateAddress sees the IPv4 address inside IPv6 transition forms', () => {
  it.each(REFUSED)('refuses %s: %s', (_what, address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each(ALLOWED)('allows %s: %s', (_what, address) => {
    expect(isPrivateAddress(address)).toBe(false);
  });
});

/** The forms the issue reproduced against direct delivery, and one more of each kind. */
const TRANSITION_LOOPBACK = [
  '2002:7f00:1::1',
  '::127.0.0.1',
  `2001:0:4136:e378:8000:63bf:${teredoClient('127.0.0.1')}`,
  '::ffff:7f00:1',
  '64:ff9b::7f00:1',
];

describe('both callers go through the one check', () => {
  it('direct delivery never targets an MX whose AAAA is a transition form of loopback', async () => {
    const resolver = fakeDnsResolver({
      mx: { 'tunnel.example': TRANSITION_LOOPBACK.map((_, i) => ({ exchange: `mx${i}.tunnel.example`, priority: i })) },
      aaaa: Object.fromEntries(TRANSITION_LOOPBACK.map((address, i) => [`mx${i}.tunnel.example`, [address]])),
    });
    const route = await resolveMxRoute('tunnel.example', { resolver, allowPrivate: false });
    expect(route).toMatchObject({ ok: false, failure: { kind: 'soft', code: 0, status: '4.4.1' } });
    const allowed = await resolveMxRoute('tunnel.example', { resolver, allowPrivate: true });
    expect(allowed.ok && allowed.targets.map((t) => t.address)).toEqual(TRANSITION_LOOPBACK);
  });

  it('direct delivery still routes to a 6to4 or NAT64 form of a public address', async () => {
    const resolver = fakeDnsResolver({ aaaa: { 'v6.example': ['2002:808:808::1', '64:ff9b::8.8.4.4'] } });
    const route = await resolveMxRoute('v6.example', { resolver, allowPrivate: false });
    expect(route.ok && route.targets.map((t) => t.address)).toEqual(['2002:808:808::1', '64:ff9b::8.8.4.4']);
  });

  it.each(TRANSITION_LOOPBACK)(
    'a webhook URL at [%s] is refused when registered and when posted to',
    async (address) => {
      const url = `http://[${address}]:8080/hook`;
      expect(await checkWebhookUrl(url, false)).toMatchObject({
        ok: false,
        reason: expect.stringMatching(/private or loopback/),
      });
      expect((await checkWebhookUrl(url, true)).ok).toBe(true);
      const posted = await postWebhook(url, '{}', {}, { allowPrivate: false, timeoutMs: 1000 });
      expect(posted).toMatchObject({ statusCode: 0, error: expect.stringMatching(/private or loopback/) });
    },
  );

  it.each(TRANSITION_LOOPBACK)('the webhook connection lookup refuses %s', async (address) => {
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      guardedLookup(false)(address, {}, (e) => resolve(e)),
    );
    expect(err?.code).toBe('EPRIVATE');
  });
});
