import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDnsResolver } from '../../src/net/dns-resolver.js';
import { createMtaStsPolicies, FETCH_RETRY_MS, MAX_POLICY_AGE_S, policyId } from '../../src/net/mta-sts.js';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.js';
import { createTestCa, selfSignedCertificate, type KeyAndCert, type TestCa } from '../helpers/test-ca.js';

/**
 * The MTA-STS policy cache against a real HTTPS policy host on 127.0.0.x presenting a certificate of a test CA,
 * found through a real DNS server: what it parses, when it fetches again, and what it refuses.
 */

interface PolicyHost {
  port: number;
  /** What the next GET answers. */
  reply: { status: number; type: string | null; body: string | Buffer; location?: string };
  requests: { host: string | undefined; path: string | undefined }[];
  close(): Promise<void>;
}

async function startPolicyHost(address: string, pair: KeyAndCert, port = 0): Promise<PolicyHost> {
  const host: PolicyHost = {
    port: 0,
    reply: { status: 200, type: 'text/plain', body: '' },
    requests: [],
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server = https.createServer({ key: pair.key, cert: pair.cert }, (req, res) => {
    host.requests.push({ host: req.headers.host, path: req.url });
    const headers: Record<string, string> = {};
    if (host.reply.type) headers['content-type'] = host.reply.type;
    if (host.reply.location) headers.location = host.reply.location;
    res.writeHead(host.reply.status, headers);
    res.end(host.reply.body);
  });
  await new Promise<void>((resolve) => server.listen(port, address, () => resolve()));
  host.port = (server.address() as AddressInfo).port;
  return host;
}

const policyText = (mode: string, mx: string[], maxAge = 86400) =>
  ['version: STSv1', `mode: ${mode}`, ...mx.map((m) => `mx: ${m}`), `max_age: ${maxAge}`, ''].join('\r\n');

const silent = { info: () => {}, warn: () => {} };

let dns: DnsServer;
let ca: TestCa;
let good: PolicyHost;
let clock: number;

beforeAll(async () => {
  dns = await startDnsServer();
  ca = await createTestCa();
  good = await startPolicyHost('127.0.0.21', await ca.issue(['mta-sts.sts.test', 'mta-sts.other.test']));
});
afterAll(async () => {
  await good?.close();
  await dns?.close();
});
beforeEach(() => {
  clock = Date.parse('2026-11-28T08:00:00Z');
  good.requests.length = 0;
  good.reply = { status: 200, type: 'text/plain', body: policyText('enforce', ['mx.sts.test', '*.sts.test']) };
  dns.set('mta-sts.sts.test', 'A', ['127.0.0.21']);
  dns.set('_mta-sts.sts.test', 'TXT', ['v=STSv1; id=20261128a']);
});

const policies = (extra: { port?: number; ca?: string[] } = {}) =>
  createMtaStsPolicies({
    resolver: createDnsResolver([dns.servers]),
    port: extra.port ?? good.port,
    logger: silent,
    allowPrivate: true,
    now: () => clock,
    timeoutMs: 3000,
    ca: extra.ca ?? [ca.cert],
  });

describe('MTA-STS policies', () => {
  it('fetches and parses an enforce policy from the policy host, by name over a verified certificate', async () => {
    const cache = policies();
    expect(await cache.policyFor('sts.test')).toEqual({
      mode: 'enforce',
      mx: ['mx.sts.test', '*.sts.test'],
      maxAgeSeconds: 86400,
    });
    expect(good.requests).toEqual([{ host: `mta-sts.sts.test:${good.port}`, path: '/.well-known/mta-sts.txt' }]);
  });

  it('parses testing and none, and a text/plain media type with parameters', async () => {
    good.reply = { status: 200, type: 'text/plain; charset=utf-8', body: policyText('testing', ['mx.sts.test']) };
    expect(await policies().policyFor('sts.test')).toMatchObject({ mode: 'testing', mx: ['mx.sts.test'] });
    good.reply = { status: 200, type: 'text/plain', body: policyText('none', []) };
    expect(await policies().policyFor('sts.test')).toMatchObject({ mode: 'none', mx: [] });
  });

  it('answers null for a domain without the TXT record, asking no policy host', async () => {
    dns.remove('_mta-sts.sts.test');
    expect(await policies().policyFor('sts.test')).toBeNull();
    dns.set('_mta-sts.sts.test', 'TXT', ['v=spf1 -all']);
    expect(await policies().policyFor('sts.test')).toBeNull();
    expect(good.requests).toHaveLength(0);
  });

  it('keeps a policy while the TXT id is the same, and fetches again when it changes', async () => {
    const cache = policies();
    await cache.policyFor('sts.test');
    clock += 3_600_000;
    expect((await cache.policyFor('sts.test'))?.mode).toBe('enforce');
    expect(good.requests).toHaveLength(1);

    good.reply = { status: 200, type: 'text/plain', body: policyText('testing', ['mx.sts.test']) };
    dns.set('_mta-sts.sts.test', 'TXT', ['v=STSv1; id=20261128b']);
    expect((await cache.policyFor('sts.test'))?.mode).toBe('testing');
    expect(good.requests).toHaveLength(2);
  });

  it('fetches again once max_age has passed, and caps max_age at a day', async () => {
    good.reply = { status: 200, type: 'text/plain', body: policyText('enforce', ['mx.sts.test'], 600) };
    const cache = policies();
    expect((await cache.policyFor('sts.test'))?.maxAgeSeconds).toBe(600);
    clock += 599_000;
    await cache.policyFor('sts.test');
    expect(good.requests).toHaveLength(1);
    clock += 2_000;
    good.reply = { status: 200, type: 'text/plain', body: policyText('enforce', ['mx.sts.test'], 31557600) };
    expect((await cache.policyFor('sts.test'))?.maxAgeSeconds).toBe(MAX_POLICY_AGE_S);
    expect(good.requests).toHaveLength(2);
  });

  it('keeps the cached policy when a refresh fails, and has none once it expires', async () => {
    const cache = policies();
    await cache.policyFor('sts.test');
    dns.set('_mta-sts.sts.test', 'TXT', ['v=STSv1; id=20261128c']);
    good.reply = { status: 500, type: 'text/plain', body: 'down' };
    expect((await cache.policyFor('sts.test'))?.mode).toBe('enforce');
    clock += MAX_POLICY_AGE_S * 1000;
    expect(await cache.policyFor('sts.test')).toBeNull();
  });

  it('a TXT lookup that fails keeps the cached policy', async () => {
    const cache = policies();
    await cache.policyFor('sts.test');
    dns.failing.add('_mta-sts.sts.test');
    try {
      expect((await cache.policyFor('sts.test'))?.mode).toBe('enforce');
    } finally {
      dns.failing.delete('_mta-sts.sts.test');
    }
  });

  it('refuses a non-2xx answer and does not follow a redirect', async () => {
    good.reply = { status: 404, type: 'text/plain', body: 'no' };
    expect(await policies().policyFor('sts.test')).toBeNull();
    good.reply = {
      status: 301,
      type: 'text/plain',
      body: policyText('enforce', ['mx.sts.test']),
      location: `https://mta-sts.other.test:${good.port}/.well-known/mta-sts.txt`,
    };
    expect(await policies().policyFor('sts.test')).toBeNull();
    expect(good.requests.map((r) => r.host)).toEqual([
      `mta-sts.sts.test:${good.port}`,
      `mta-sts.sts.test:${good.port}`,
    ]);
  });

  it('refuses a policy that is not text/plain', async () => {
    good.reply = { status: 200, type: 'text/html', body: policyText('enforce', ['mx.sts.test']) };
    expect(await policies().policyFor('sts.test')).toBeNull();
    good.reply = { status: 200, type: null, body: policyText('enforce', ['mx.sts.test']) };
    expect(await policies().policyFor('sts.test')).toBeNull();
  });

  it('refuses a policy over 64 KiB', async () => {
    const padding = `# ${'x'.repeat(1000)}\r\n`.repeat(66);
    good.reply = { status: 200, type: 'text/plain', body: policyText('enforce', ['mx.sts.test']) + padding };
    expect(Buffer.byteLength(good.reply.body)).toBeGreaterThan(64 * 1024);
    expect(await policies().policyFor('sts.test')).toBeNull();
    // Just under the bound is fine: the refusal is the size, not the comment lines.
    good.reply.body = policyText('enforce', ['mx.sts.test']) + `# ${'x'.repeat(1000)}\r\n`.repeat(60);
    expect((await policies().policyFor('sts.test'))?.mode).toBe('enforce');
  });

  it('refuses a policy that does not parse', async () => {
    good.reply = { status: 200, type: 'text/plain', body: 'version: STSv1\r\nmode: enforce\r\nmax_age: 600\r\n' };
    expect(await policies().policyFor('sts.test')).toBeNull();
  });

  it('refuses a self-signed certificate, and one of the CA for another name', async () => {
    const selfSigned = await startPolicyHost('127.0.0.22', await selfSignedCertificate(['mta-sts.sts.test']));
    const otherName = await startPolicyHost('127.0.0.23', await ca.issue(['mta-sts.elsewhere.test']), selfSigned.port);
    try {
      dns.set('mta-sts.sts.test', 'A', ['127.0.0.22']);
      good.reply.body = policyText('enforce', ['mx.sts.test']);
      expect(await policies({ port: selfSigned.port }).policyFor('sts.test')).toBeNull();
      dns.set('mta-sts.sts.test', 'A', ['127.0.0.23']);
      expect(await policies({ port: selfSigned.port }).policyFor('sts.test')).toBeNull();
      expect(selfSigned.requests).toHaveLength(0);
      expect(otherName.requests).toHaveLength(0);
    } finally {
      await selfSigned.close();
      await otherName.close();
    }
  });

  it("without the test CA (Node's own CAs), the test certificate is refused", async () => {
    const cache = createMtaStsPolicies({
      resolver: createDnsResolver([dns.servers]),
      port: good.port,
      logger: silent,
      allowPrivate: true,
      now: () => clock,
    });
    expect(await cache.policyFor('sts.test')).toBeNull();
    expect(good.requests).toHaveLength(0);
  });

  it('a failed fetch is not tried again for a while, then is', async () => {
    good.reply = { status: 503, type: 'text/plain', body: 'later' };
    const cache = policies();
    expect(await cache.policyFor('sts.test')).toBeNull();
    expect(await cache.policyFor('sts.test')).toBeNull();
    expect(good.requests).toHaveLength(1);
    good.reply = { status: 200, type: 'text/plain', body: policyText('enforce', ['mx.sts.test']) };
    clock += FETCH_RETRY_MS + 1;
    expect((await cache.policyFor('sts.test'))?.mode).toBe('enforce');
  });

  it('refuses a policy host at a private address unless allowed', async () => {
    const cache = createMtaStsPolicies({
      resolver: createDnsResolver([dns.servers]),
      port: good.port,
      logger: silent,
      ca: [ca.cert],
    });
    expect(await cache.policyFor('sts.test')).toBeNull();
    expect(good.requests).toHaveLength(0);
  });

  it('asks once for many simultaneous deliveries to one domain', async () => {
    const cache = policies();
    const answers = await Promise.all(Array.from({ length: 5 }, () => cache.policyFor('STS.test.')));
    expect(answers.every((p) => p?.mode === 'enforce')).toBe(true);
    expect(good.requests).toHaveLength(1);
  });
});

describe('policyId', () => {
  it('reads the id of the one v=STSv1 record', () => {
    expect(policyId(['v=spf1 -all', 'v=STSv1; id=abc123;'])).toBe('abc123');
    expect(policyId(['v=STSv1;id=20160831085700Z'])).toBe('20160831085700Z');
  });
  it('answers null for none, several, or a bad id', () => {
    expect(policyId([])).toBeNull();
    expect(policyId(['v=STSv1; id=a', 'v=STSv1; id=b'])).toBeNull();
    expect(policyId(['v=STSv1; id=not-alnum'])).toBeNull();
    expect(policyId(['v=STSv1'])).toBeNull();
  });
});
