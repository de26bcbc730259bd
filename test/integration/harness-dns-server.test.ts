import crypto from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.js';

let dns: DnsServer;
let resolver: Resolver;

beforeAll(async () => {
  dns = await startDnsServer();
  resolver = new Resolver({ timeout: 2000, tries: 2 });
  resolver.setServers([dns.servers]);
});
afterAll(async () => {
  await dns?.close();
});

/** The test DNS server, read back through node's own resolver (c-ares), as the service reads it. */
describe('the test DNS server', () => {
  it('answers A, AAAA and MX records in preference order as published', async () => {
    dns.set('mx1.example.test', 'A', ['127.0.0.2']);
    dns.set('mx1.example.test', 'AAAA', ['::1']);
    dns.set('example.test', 'MX', [
      { exchange: 'mx2.example.test', priority: 20 },
      { exchange: 'mx1.example.test', priority: 10 },
    ]);
    expect(dns.servers).toBe(`127.0.0.1:${dns.port}`);
    expect(await resolver.resolve4('mx1.example.test')).toEqual(['127.0.0.2']);
    expect(await resolver.resolve4('MX1.Example.Test.')).toEqual(['127.0.0.2']);
    expect(await resolver.resolve6('mx1.example.test')).toEqual(['::1']);
    const mx = await resolver.resolveMx('example.test');
    expect(mx.sort((a, b) => a.priority - b.priority)).toEqual([
      { exchange: 'mx1.example.test', priority: 10 },
      { exchange: 'mx2.example.test', priority: 20 },
    ]);
  });

  it('publishes a null MX as `0 .`', async () => {
    dns.setNullMx('nomail.example.test');
    expect(await resolver.resolveMx('nomail.example.test')).toEqual([{ exchange: '', priority: 0 }]);
  });

  it('serves a 2048-bit DKIM key as several character strings, which join back to the record', async () => {
    const { publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    const p = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    const record = `v=DKIM1; k=rsa; p=${p}`;
    expect(record.length).toBeGreaterThan(255);
    dns.set('s1._domainkey.example.test', 'TXT', [record]);
    dns.set('example.test', 'TXT', ['v=spf1 a:mail.mailer.test -all']);

    const [chunks] = await resolver.resolveTxt('s1._domainkey.example.test');
    expect(chunks!.length).toBeGreaterThan(1);
    expect(chunks!.every((c) => Buffer.byteLength(c) <= 255)).toBe(true);
    expect(chunks!.join('')).toBe(record);
    expect(await resolver.resolveTxt('example.test')).toEqual([['v=spf1 a:mail.mailer.test -all']]);
    const key = crypto.createPublicKey({
      key: Buffer.from(chunks!.join('').split('p=')[1]!, 'base64'),
      format: 'der',
      type: 'spki',
    });
    expect(key.asymmetricKeyDetails?.modulusLength).toBe(2048);
  });

  it('serves a TXT record given as character strings exactly as given, as a zone file publishes them', async () => {
    const strings = ['v=DKIM1; k=rsa; p=' + 'A'.repeat(237), 'B'.repeat(100)];
    expect(strings[0]).toHaveLength(255);
    dns.set('s2._domainkey.example.test', 'TXT', [strings, 'second record']);
    expect(await resolver.resolveTxt('s2._domainkey.example.test')).toEqual([strings, ['second record']]);
  });

  it('answers NXDOMAIN (ENOTFOUND) for an unknown name and no data (ENODATA) for a known name without the type', async () => {
    await expect(resolver.resolve4('unknown.example.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    dns.set('txtonly.example.test', 'TXT', ['hello']);
    await expect(resolver.resolveMx('txtonly.example.test')).rejects.toMatchObject({ code: 'ENODATA' });
    await expect(resolver.resolve4('txtonly.example.test')).rejects.toMatchObject({ code: 'ENODATA' });
  });

  it('sees changes at once: a replaced record, a removed type, a removed name', async () => {
    dns.set('moving.example.test', 'A', ['127.0.0.5']);
    dns.set('moving.example.test', 'TXT', ['here']);
    expect(await resolver.resolve4('moving.example.test')).toEqual(['127.0.0.5']);
    dns.set('moving.example.test', 'A', ['127.0.0.6', '127.0.0.7']);
    expect((await resolver.resolve4('moving.example.test')).sort()).toEqual(['127.0.0.6', '127.0.0.7']);
    dns.remove('moving.example.test', 'A');
    await expect(resolver.resolve4('moving.example.test')).rejects.toMatchObject({ code: 'ENODATA' });
    dns.remove('moving.example.test');
    await expect(resolver.resolveTxt('moving.example.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('follows a CNAME to its target', async () => {
    dns.set('target.example.test', 'A', ['127.0.0.9']);
    dns.set('alias.example.test', 'CNAME', ['target.example.test']);
    expect(await resolver.resolve4('alias.example.test')).toEqual(['127.0.0.9']);
    expect(await resolver.resolveCname('alias.example.test')).toEqual(['target.example.test']);
  });

  it('answers over TCP too, on the same port', async () => {
    const { TCPClient } = (await import('dns2')).default;
    const resolve = TCPClient({ dns: '127.0.0.1', port: dns.port });
    dns.set('tcp.example.test', 'A', ['127.0.0.4']);
    const res = await resolve('tcp.example.test', 'A');
    expect(res.answers.map((a) => (a as { address?: string }).address)).toEqual(['127.0.0.4']);
    expect(dns.queries).toContain('tcp.example.test A');
  });
});
