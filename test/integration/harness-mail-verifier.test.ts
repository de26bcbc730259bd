import crypto from 'node:crypto';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.js';
import { verifyAsReceiver } from '../helpers/mail-verifier.js';

const DOMAIN = 'sender.test';
const SELECTOR = 's2048';
const MAIL_FROM = 'b-em_0123-abcdefgh@rp.sender.test';

/** A message signed by nodemailer's own DKIM signer (relaxed/relaxed, rsa-sha256) with `privateKey`. */
async function signedMessage(privateKey: string): Promise<Buffer> {
  const transport = nodemailer.createTransport({
    streamTransport: true,
    buffer: true,
    dkim: { domainName: DOMAIN, keySelector: SELECTOR, privateKey },
  });
  const info = await transport.sendMail({
    envelope: { from: MAIL_FROM, to: ['rcpt@receiver.test'] },
    from: `Sender <x@${DOMAIN}>`,
    to: 'rcpt@receiver.test',
    subject: 'Signed',
    text: 'The body the signature covers.\n',
  });
  return info.message as Buffer;
}

describe('verifyAsReceiver (mailauth over the test DNS server)', () => {
  let dns: DnsServer;
  let raw: Buffer;

  beforeAll(async () => {
    dns = await startDnsServer();
    const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    const p = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    dns.set(`${SELECTOR}._domainkey.${DOMAIN}`, 'TXT', [`v=DKIM1; k=rsa; p=${p}`]);
    dns.set('rp.sender.test', 'TXT', ['v=spf1 a:mail.mailer.test -all']);
    dns.set('mail.mailer.test', 'A', ['127.0.0.1']);
    dns.set(`_dmarc.${DOMAIN}`, 'TXT', ['v=DMARC1; p=reject']);
    raw = await signedMessage(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
  });
  afterAll(async () => {
    await dns?.close();
  });

  const context = (ip = '127.0.0.1') => ({ ip, helo: 'mail.mailer.test', mailFrom: MAIL_FROM, dns });

  it('a signed message from the authorised address passes DKIM (d = the From domain), SPF (the return-path domain) and DMARC', async () => {
    const verdict = await verifyAsReceiver(raw, context());
    expect(verdict.dkim, verdict.headers).toEqual([
      { status: 'pass', domain: DOMAIN, selector: SELECTOR, aligned: true },
    ]);
    expect(verdict.spf, verdict.headers).toEqual({ status: 'pass', domain: 'rp.sender.test' });
    expect(verdict.dmarc, verdict.headers).toMatchObject({
      status: 'pass',
      policy: 'reject',
      domain: DOMAIN,
      alignment: { spf: 'rp.sender.test', dkim: DOMAIN },
    });
    expect(verdict.headers).toContain('Authentication-Results: mx.receiver.test;');
  });

  it('a body changed after signing does not pass DKIM: mailauth says neutral, "body hash did not verify" (RFC 6376 3.7)', async () => {
    const tampered = Buffer.from(
      raw.toString().replace('The body the signature covers.', 'The body somebody changed.'),
    );
    const verdict = await verifyAsReceiver(tampered, context());
    expect(verdict.dkim).toEqual([
      { status: 'neutral', domain: DOMAIN, selector: SELECTOR, aligned: true, comment: 'body hash did not verify' },
    ]);
    // SPF still passes and aligns (relaxed), so DMARC passes on it alone.
    expect(verdict.spf.status).toBe('pass');
    expect(verdict.dmarc.status).toBe('pass');
  });

  it('a client address the SPF record does not name fails SPF (-all); with a broken signature too, DMARC fails', async () => {
    const verdict = await verifyAsReceiver(raw, context('127.0.0.9'));
    expect(verdict.spf).toEqual({ status: 'fail', domain: 'rp.sender.test' });
    expect(verdict.dkim.map((d) => d.status)).toEqual(['pass']);
    expect(verdict.dmarc.status).toBe('pass');

    // A signed header changed: the signature itself fails.
    const tampered = Buffer.from(raw.toString().replace('Subject: Signed', 'Subject: Forged'));
    const both = await verifyAsReceiver(tampered, context('127.0.0.9'));
    expect(both.dkim.map((d) => [d.status, d.domain])).toEqual([['fail', DOMAIN]]);
    expect(both.dmarc).toMatchObject({ status: 'fail', policy: 'reject' });
  });

  it('a key missing from DNS is no pass', async () => {
    dns.remove(`${SELECTOR}._domainkey.${DOMAIN}`);
    try {
      const verdict = await verifyAsReceiver(raw, context());
      expect(verdict.dkim).toHaveLength(1);
      expect(verdict.dkim[0]!.status).not.toBe('pass');
    } finally {
      // Tests after this one would see no key otherwise; this one runs last, but keep the zone whole anyway.
      dns.remove(`${SELECTOR}._domainkey.${DOMAIN}`, 'TXT');
    }
  });
});
