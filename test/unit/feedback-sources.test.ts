import crypto from 'node:crypto';
import { dkimSign } from 'mailauth';
import { describe, expect, it } from 'vitest';
import type { DnsResolver } from '../../src/net/dns-resolver.js';
import { createFeedbackSources, parseFeedbackSources } from '../../src/inbound/feedback-sources.js';

/** A resolver that knows one TXT record: the DKIM key of `fbl.provider.test` (a fake at the lookup seam). */
function resolverWith(records: Record<string, string>): DnsResolver {
  return {
    resolveTxt: async (name) => (records[name] === undefined ? [] : [records[name]!]),
    resolveMx: async () => [],
    resolve4: async () => [],
    resolve6: async () => [],
  };
}

const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const dkimRecord = `v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`;
const report = Buffer.from(
  'From: Feedback <fbl@fbl.provider.test>\r\nTo: fbl@mailer.test\r\nSubject: Abuse report\r\nMessage-ID: <1@fbl.provider.test>\r\n\r\nreport\r\n',
);

async function signedBy(domain: string): Promise<Buffer> {
  // mailauth's signer reads `signatureData` (its README); its bundled types still describe an older flat shape.
  const options = {
    signatureData: [
      {
        signingDomain: domain,
        selector: 's1',
        privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
      },
    ],
  };
  const signed = await dkimSign(report, options as unknown as Parameters<typeof dkimSign>[1]);
  return Buffer.concat([Buffer.from(signed.signatures), report]);
}

describe('trusted feedback loops (MAILER_FBL_SOURCES)', () => {
  it('reads addresses, networks and domains, and refuses anything else by name', () => {
    expect(
      parseFeedbackSources(['203.0.113.7', '2001:db8::/32', '198.51.100.0/24', 'Feedback.Yahoo.com']),
    ).toMatchObject({ domains: ['feedback.yahoo.com'] });
    expect(parseFeedbackSources(['10.0.0.0/33'])).toEqual({ error: '"10.0.0.0/33": the prefix length must be 0-32' });
    expect(parseFeedbackSources(['not a source'])).toEqual({
      error: '"not a source" is not an address, a network or a domain',
    });
    expect(() => createFeedbackSources(['x/y/z'], resolverWith({}))).toThrow(/MAILER_FBL_SOURCES/);
  });

  it('trusts a listed connecting address or network, IPv4-mapped included, and nothing else', async () => {
    const sources = createFeedbackSources(['203.0.113.7', '2001:db8::/32'], resolverWith({}));
    expect(await sources.trusted(report, '203.0.113.7')).toBe(true);
    expect(await sources.trusted(report, '::ffff:203.0.113.7')).toBe(true);
    expect(await sources.trusted(report, '2001:db8:1::5')).toBe(true);
    expect(await sources.trusted(report, '203.0.113.8')).toBe(false);
    expect(await sources.trusted(report, undefined)).toBe(false);
    expect(createFeedbackSources([], resolverWith({})).configured).toBe(false);
  });

  it('trusts a report whose DKIM signature of a listed domain (or a subdomain) verifies; a forged or foreign one is not', async () => {
    const resolver = resolverWith({
      's1._domainkey.fbl.provider.test': dkimRecord,
      's1._domainkey.elsewhere.test': dkimRecord,
    });
    const sources = createFeedbackSources(['provider.test'], resolver);
    const genuine = await signedBy('fbl.provider.test');
    expect(await sources.trusted(genuine, '192.0.2.1')).toBe(true);
    // The same signature over other bytes no longer verifies.
    expect(
      await sources.trusted(Buffer.from(genuine.toString().replace('report\r\n', 'forged\r\n')), '192.0.2.1'),
    ).toBe(false);
    expect(await sources.trusted(await signedBy('elsewhere.test'), '192.0.2.1')).toBe(false);
    expect(await sources.trusted(report, '192.0.2.1')).toBe(false);
  });
});
