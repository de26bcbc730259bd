import crypto from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  publishMx,
  publishRecords,
  receiverVerdict,
  verpPattern,
  type DnsRecordView,
} from '../helpers/deliverability.js';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.js';
import { verifyAsReceiver } from '../helpers/mail-verifier.js';
import { startMxHosts, type MxHosts } from '../helpers/mx-hosts.js';

/**
 * The receiving side of the deliverability tests, end to end without the service: a sender that does
 * everything right (records published as the API lists them, DKIM-signed, VERP return path, from the
 * address SPF names, MX found through the test DNS) is received by an MX sink and passes DKIM, SPF and
 * DMARC there. So when a deliverability test fails, the service is at fault, not the harness.
 */
const DOMAIN = 'chain.test';
const SELECTOR = 'mlr1';

describe('the receiving chain: test DNS, MX sinks, verifier', () => {
  let dns: DnsServer;
  let mx: MxHosts;
  let privateKey: string;

  beforeAll(async () => {
    dns = await startDnsServer();
    mx = await startMxHosts(2);
    const keys = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    privateKey = keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const p = keys.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    // The records in the contract's shape, published by the same helper the end-to-end tests use.
    const records: DnsRecordView[] = [
      {
        type: 'TXT',
        name: `_mailer.${DOMAIN}`,
        value: 'mailer-verification=abc',
        purpose: 'ownership',
        status: 'pending',
      },
      { type: 'TXT', name: DOMAIN, value: 'v=spf1 a:mail.mailer.test ~all', purpose: 'spf', status: 'pending' },
      {
        type: 'TXT',
        name: `${SELECTOR}._domainkey.${DOMAIN}`,
        value: `v=DKIM1; k=rsa; p=${p}`,
        purpose: 'dkim',
        status: 'pending',
      },
      { type: 'MX', name: `rp.${DOMAIN}`, value: '10 mail.mailer.test', purpose: 'return_path', status: 'pending' },
      {
        type: 'TXT',
        name: `rp.${DOMAIN}`,
        value: 'v=spf1 a:mail.mailer.test -all',
        purpose: 'return_path_spf',
        status: 'pending',
      },
      { type: 'TXT', name: `_dmarc.${DOMAIN}`, value: 'v=DMARC1; p=none;', purpose: 'dmarc', status: 'pending' },
    ];
    publishRecords(dns, records, { dmarc: 'v=DMARC1; p=reject' });
    dns.set('mail.mailer.test', 'A', ['127.0.0.1']);
    publishMx(dns, 'inbox.test', [
      { ip: '127.0.0.3', priority: 10 },
      { ip: '127.0.0.2', priority: 20 },
    ]);
  });
  afterAll(async () => {
    await mx?.close();
    await dns?.close();
  });

  it('publishRecords puts each record where a resolver finds it', async () => {
    const resolver = new Resolver();
    resolver.setServers([dns.servers]);
    expect(await resolver.resolveMx(`rp.${DOMAIN}`)).toEqual([{ exchange: 'mail.mailer.test', priority: 10 }]);
    expect(await resolver.resolveTxt(`rp.${DOMAIN}`)).toEqual([['v=spf1 a:mail.mailer.test -all']]);
    expect(await resolver.resolveTxt(`_dmarc.${DOMAIN}`)).toEqual([['v=DMARC1; p=reject']]);
  });

  it("a correct sender's message, through the recipient's MX found in DNS, passes everything at the receiver", async () => {
    const resolver = new Resolver();
    resolver.setServers([dns.servers]);
    const [best] = (await resolver.resolveMx('inbox.test')).sort((a, b) => a.priority - b.priority);
    const [ip] = await resolver.resolve4(best!.exchange);
    const returnPath = 'b-em_01abc.0-abcdefghijklmnopqrstuvwx@rp.chain.test';
    expect(returnPath).toMatch(verpPattern(DOMAIN));
    const transport = nodemailer.createTransport({
      host: ip,
      port: mx.port,
      name: 'mail.mailer.test',
      tls: { rejectUnauthorized: false },
      dkim: { domainName: DOMAIN, keySelector: SELECTOR, privateKey },
    });
    try {
      // A line starting with a dot: the sink must store the message dot-unstuffed, as it was signed.
      await transport.sendMail({
        envelope: { from: returnPath, to: ['reader@inbox.test'] },
        from: `x@${DOMAIN}`,
        to: 'reader@inbox.test',
        subject: 'Chain',
        text: 'Hello\n.dotted line\nbye\n',
      });
    } finally {
      transport.close();
    }
    const message = await mx.waitForMessage((m) => m.envelopeTo.includes('reader@inbox.test'), 10_000);
    expect(message).toMatchObject({
      host: '127.0.0.3',
      secure: true,
      helo: 'mail.mailer.test',
      remoteAddress: '127.0.0.1',
      envelopeFrom: returnPath,
    });
    const verdict = await receiverVerdict({ dns }, message);
    expect(
      verdict.dkim.map((d) => [d.status, d.domain, d.selector]),
      verdict.headers,
    ).toEqual([['pass', DOMAIN, SELECTOR]]);
    expect(verdict.spf).toEqual({ status: 'pass', domain: `rp.${DOMAIN}` });
    expect(verdict.dmarc).toMatchObject({ status: 'pass', policy: 'reject' });
    // The same message from an address the SPF record does not name: SPF fails, DKIM still carries DMARC.
    const elsewhere = await verifyAsReceiver(message.raw, {
      ip: '127.0.0.8',
      helo: message.helo,
      mailFrom: returnPath,
      dns,
    });
    expect([elsewhere.spf.status, elsewhere.dmarc.status]).toEqual(['fail', 'pass']);
  });
});
