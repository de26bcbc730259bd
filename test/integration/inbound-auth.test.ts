/**
 * SPF, DKIM and DMARC of inbound mail (src/inbound/inbound-auth.ts) judged against the real DNS server the
 * deliverability tests use (test/helpers/dns-server.ts), through the service's own resolver (what
 * MAILER_DNS_SERVERS makes) adapted for mailauth.
 */
import crypto from 'node:crypto';
import dgram from 'node:dgram';
import { Readable } from 'node:stream';
import { dkimSign } from 'mailauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticateInbound, INBOUND_AUTH_LIMITS, mailauthResolver } from '../../src/inbound/inbound-auth.js';
import { createCachingResolver } from '../../src/net/caching-resolver.js';
import { createDnsResolver } from '../../src/net/dns-resolver.js';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.js';

const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
const dkimRecord = `v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`;

/** The address the test's SMTP clients connect from, and one no domain lists. */
const LISTED = '127.0.0.1';
const UNLISTED = '192.0.2.10';

const messageFrom = (domain: string, body = 'Thanks, that works for me.\r\n') =>
  Buffer.from(
    `From: Jane <jane@${domain}>\r\nTo: support@inbound.test\r\nSubject: Re: your order\r\n` +
      `Message-ID: <${crypto.randomUUID()}@${domain}>\r\nDate: Fri, 27 Nov 2026 10:02:00 +0000\r\n\r\n${body}`,
  );

/** `message` with DKIM signatures of `domain`, one per selector (all with the same key). */
async function signed(message: Buffer, domain: string, selectors = ['s1']): Promise<Buffer> {
  const signatureData = selectors.map((selector) => ({ signingDomain: domain, selector, privateKey: privatePem }));
  const result = await dkimSign(message, { ...signatureData[0]!, signatureData });
  expect(result.errors).toEqual([]);
  return Buffer.concat([Buffer.from(result.signatures), message]);
}

describe('authenticateInbound', () => {
  let dns: DnsServer;
  let resolver: ReturnType<typeof mailauthResolver>;

  beforeAll(async () => {
    dns = await startDnsServer();
    resolver = mailauthResolver(createDnsResolver([dns.servers], { timeoutMs: 2000, tries: 2 }));
    // signed.test: a DKIM key, SPF for the listed address, a strict DMARC policy.
    dns.set('s1._domainkey.signed.test', 'TXT', [dkimRecord]);
    dns.set('signed.test', 'TXT', [`v=spf1 ip4:${LISTED} -all`]);
    dns.set('_dmarc.signed.test', 'TXT', ['v=DMARC1; p=reject']);
    // softfail.test: no key, SPF softfails the rest; DMARC published.
    dns.set('softfail.test', 'TXT', [`v=spf1 ip4:${LISTED} ~all`]);
    dns.set('_dmarc.softfail.test', 'TXT', ['v=DMARC1; p=quarantine']);
    // The HELO name of a null sender's client.
    dns.set('mx.helo.test', 'TXT', [`v=spf1 ip4:${LISTED} -all`]);
  });
  afterAll(() => dns?.close());

  it('passes a message signed by a domain whose key is published, sent from its SPF-listed address', async () => {
    const raw = await signed(messageFrom('signed.test'), 'signed.test');
    const envelope = { remoteAddress: LISTED, helo: 'mail.signed.test', mailFrom: 'bounces@signed.test' };
    expect(await authenticateInbound(raw, envelope, resolver)).toEqual({ spf: 'pass', dkim: 'pass', dmarc: 'pass' });
    // The same as a stream, and from an IPv4-mapped address as a dual-stack listener reports it.
    const mapped = { ...envelope, remoteAddress: `::ffff:${LISTED}` };
    expect(await authenticateInbound(Readable.from([raw]), mapped, resolver)).toEqual({
      spf: 'pass',
      dkim: 'pass',
      dmarc: 'pass',
    });
  });

  it('fails a signed message altered after signing, body or header, and its DMARC from an unlisted address', async () => {
    const raw = await signed(messageFrom('signed.test'), 'signed.test');
    const envelope = { remoteAddress: UNLISTED, helo: 'spoofer.example', mailFrom: 'bounces@signed.test' };
    const alteredBody = Buffer.from(raw.toString().replace('works for me', 'works for us'));
    expect(await authenticateInbound(alteredBody, envelope, resolver)).toEqual({
      spf: 'fail',
      dkim: 'fail',
      dmarc: 'fail',
    });
    const alteredSubject = Buffer.from(raw.toString().replace('Subject: Re: your order', 'Subject: Re: payment'));
    expect(await authenticateInbound(alteredSubject, envelope, resolver)).toEqual({
      spf: 'fail',
      dkim: 'fail',
      dmarc: 'fail',
    });
    // Still DKIM-aligned: DMARC passes on DKIM alone when SPF fails (forwarded mail).
    expect(await authenticateInbound(raw, envelope, resolver)).toEqual({ spf: 'fail', dkim: 'pass', dmarc: 'pass' });
  });

  it('judges an unsigned message by SPF as published: pass from the listed address, softfail from another', async () => {
    const raw = messageFrom('softfail.test');
    const from = (remoteAddress: string) => ({
      remoteAddress,
      helo: 'mail.softfail.test',
      mailFrom: 'a@softfail.test',
    });
    expect(await authenticateInbound(raw, from(LISTED), resolver)).toEqual({
      spf: 'pass',
      dkim: 'none',
      dmarc: 'pass',
    });
    expect(await authenticateInbound(raw, from(UNLISTED), resolver)).toEqual({
      spf: 'softfail',
      dkim: 'none',
      dmarc: 'fail',
    });
    // A domain that publishes nothing.
    const nothing = { remoteAddress: LISTED, helo: 'x.test', mailFrom: 'a@nothing.test' };
    expect(await authenticateInbound(messageFrom('nothing.test'), nothing, resolver)).toEqual({
      spf: 'none',
      dkim: 'none',
      dmarc: 'none',
    });
  });

  it("checks the HELO name's SPF for the null sender", async () => {
    const raw = messageFrom('softfail.test');
    expect(
      await authenticateInbound(raw, { remoteAddress: LISTED, helo: 'mx.helo.test', mailFrom: '' }, resolver),
    ).toEqual({
      spf: 'pass',
      dkim: 'none',
      // DMARC needs SPF of the From domain (or its DKIM): the HELO name's pass does not align.
      dmarc: 'fail',
    });
    const unlisted = { remoteAddress: UNLISTED, helo: 'mx.helo.test', mailFrom: '' };
    expect((await authenticateInbound(raw, unlisted, resolver)).spf).toBe('fail');
  });

  it('verifies at most 10 of a message’s DKIM signatures, the first ones', async () => {
    const unpublished = Array.from({ length: 49 }, (_, i) => `unpublished${i}`);
    const envelope = { remoteAddress: LISTED, helo: 'mail.signed.test', mailFrom: 'bounces@signed.test' };
    // The signatures are written in the order of their selectors: the valid one is the 50th field here.
    const last = await signed(messageFrom('signed.test'), 'signed.test', [...unpublished, 's1']);
    const before = dns.queries.length;
    expect((await authenticateInbound(last, envelope, resolver)).dkim).toBe('neutral');
    const keyLookups = dns.queries.slice(before).filter((q) => q.includes('._domainkey.'));
    expect(keyLookups).toHaveLength(INBOUND_AUTH_LIMITS.dkimSignatures);
    expect(keyLookups[0]).toBe('unpublished0._domainkey.signed.test TXT');

    const first = await signed(messageFrom('signed.test'), 'signed.test', ['s1', ...unpublished]);
    expect((await authenticateInbound(first, envelope, resolver)).dkim).toBe('pass');
  });

  it('answers permerror for DKIM and DMARC of a message whose header block is over 1 MiB, and still checks SPF', async () => {
    const filler = Array.from({ length: 20_000 }, (_, i) => `X-Filler-${i}: ${'x'.repeat(60)}\r\n`).join('');
    const raw = Buffer.concat([Buffer.from(filler), await signed(messageFrom('signed.test'), 'signed.test')]);
    const envelope = { remoteAddress: LISTED, helo: 'mail.signed.test', mailFrom: 'bounces@signed.test' };
    expect(await authenticateInbound(raw, envelope, resolver)).toEqual({
      spf: 'pass',
      dkim: 'permerror',
      dmarc: 'permerror',
    });
  });

  it('judges the same through the caching resolver the service uses, asking each record once for a sender’s messages', async () => {
    // cached.test: the records of signed.test, under a name no other test asks.
    dns.set('s1._domainkey.cached.test', 'TXT', [dkimRecord]);
    dns.set('cached.test', 'TXT', [`v=spf1 ip4:${LISTED} -all`]);
    dns.set('_dmarc.cached.test', 'TXT', ['v=DMARC1; p=reject']);
    const cached = mailauthResolver(createCachingResolver([dns.servers], { timeoutMs: 2000, tries: 2 }));
    const envelope = { remoteAddress: LISTED, helo: 'mail.cached.test', mailFrom: 'bounces@cached.test' };
    const asked = () => dns.queries.filter((q) => q.includes('cached.test')).sort();
    for (let i = 0; i < 3; i++) {
      const raw = await signed(messageFrom('cached.test', `Message ${i}.\r\n`), 'cached.test');
      expect(await authenticateInbound(raw, envelope, cached)).toEqual({ spf: 'pass', dkim: 'pass', dmarc: 'pass' });
    }
    expect(asked()).toEqual(['_dmarc.cached.test TXT', 'cached.test TXT', 's1._domainkey.cached.test TXT']);
    // The cache changes no verdict: a message altered after signing, from an address SPF does not list, fails all three.
    const altered = Buffer.from(
      (await signed(messageFrom('cached.test'), 'cached.test')).toString().replace('works for me', 'works for us'),
    );
    const spoofed = { ...envelope, remoteAddress: UNLISTED };
    expect(await authenticateInbound(altered, spoofed, cached)).toEqual({ spf: 'fail', dkim: 'fail', dmarc: 'fail' });
    expect(asked()).toHaveLength(3);
  });

  it('answers temperror when DNS does not answer within the time limit', async () => {
    // A DNS server that takes every question and answers none.
    const silent = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    try {
      const hanging = mailauthResolver(
        createDnsResolver([`127.0.0.1:${silent.address().port}`], { timeoutMs: 5000, tries: 2 }),
      );
      const raw = await signed(messageFrom('signed.test'), 'signed.test');
      const envelope = { remoteAddress: LISTED, helo: 'mail.signed.test', mailFrom: 'bounces@signed.test' };
      const started = Date.now();
      const result = await authenticateInbound(raw, envelope, hanging, { timeoutMs: 500 });
      expect(result).toEqual({ spf: 'temperror', dkim: 'temperror', dmarc: 'temperror' });
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      silent.close();
    }
  });
});
