import fs from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import { admin } from '../helpers/admin-fixtures.js';
import { publishRecords, sendEmail, waitForStatus, type DomainView } from '../helpers/deliverability.js';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.js';
import { newKey } from '../helpers/multi-process.js';
import { startMxHosts, type MxNetwork } from '../helpers/mx-servers.js';
import { childLogs, createDeployment, killAll, spawnService, waitReady } from '../helpers/service-process.js';
import type { Stack } from '../helpers/stack.js';
import { createTestCa, selfSignedCertificate } from '../helpers/test-ca.js';

/**
 * MTA-STS end to end (issue 28, RFC 8461): the service as in production (a child process), its DNS the tests'
 * server, policies served over HTTPS by a host with a certificate of a test CA, MX hosts presenting either a
 * certificate of that CA for their name or a self-signed one. The CA reaches the service the way an operator's
 * would: NODE_EXTRA_CA_CERTS, which Node reads at start (hence a child process, not the in-process stack).
 *
 * - enforce, MX certificate verified for its name: delivered over TLS, the delivery event says tls_verified;
 * - enforce, self-signed MX certificate: never delivered, deferred with 4.7.5 (a Transient bounce once the
 *   retries, one here, are spent);
 * - enforce, MX not listed in the policy: the same, without a connection at all;
 * - testing: delivered despite the self-signed certificate (tls_verified false);
 * - none, and no policy at all: delivered as before, opportunistic TLS.
 */

const GOOD_MX = '127.0.0.41';
const BAD_MX = '127.0.0.42';
const POLICY_HOST = '127.0.0.40';
const SENDER = 'sts-sender.test';

/** Each recipient domain: its MX host name and address, and its policy (null: no _mta-sts record). */
const DOMAINS: Record<string, { mx: string; ip: string; policy: string | null }> = {
  'enforce-good.test': { mx: 'mx.good.test', ip: GOOD_MX, policy: 'mode: enforce\r\nmx: mx.good.test' },
  'enforce-wild.test': { mx: 'mx.good.test', ip: GOOD_MX, policy: 'mode: enforce\r\nmx: *.good.test' },
  'enforce-bad.test': { mx: 'mx.bad.test', ip: BAD_MX, policy: 'mode: enforce\r\nmx: mx.bad.test' },
  'enforce-unlisted.test': { mx: 'mx.good.test', ip: GOOD_MX, policy: 'mode: enforce\r\nmx: mx.other.test' },
  'testing-bad.test': { mx: 'mx.bad.test', ip: BAD_MX, policy: 'mode: testing\r\nmx: mx.bad.test' },
  'none-bad.test': { mx: 'mx.bad.test', ip: BAD_MX, policy: 'mode: none' },
  'plain.test': { mx: 'mx.bad.test', ip: BAD_MX, policy: null },
};

let dns: DnsServer;
let mx: MxNetwork;
let policyServer: https.Server;
let d: Awaited<ReturnType<typeof createDeployment>>;
let stack: Stack;

beforeAll(async () => {
  const ca = await createTestCa();
  dns = await startDnsServer();
  const good = await ca.issue(['mx.good.test']);
  const bad = await selfSignedCertificate(['mx.bad.test']);
  mx = await startMxHosts([
    { address: GOOD_MX, tls: { key: Buffer.from(good.key), cert: Buffer.from(good.cert) } },
    { address: BAD_MX, tls: { key: Buffer.from(bad.key), cert: Buffer.from(bad.cert) } },
  ]);

  const policyCert = await ca.issue(Object.keys(DOMAINS).map((domain) => `mta-sts.${domain}`));
  policyServer = https.createServer({ key: policyCert.key, cert: policyCert.cert }, (req, res) => {
    const domain = (req.headers.host ?? '').replace(/^mta-sts\./, '').replace(/:\d+$/, '');
    const policy = DOMAINS[domain]?.policy;
    if (!policy || req.url !== '/.well-known/mta-sts.txt') return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`version: STSv1\r\n${policy}\r\nmax_age: 86400\r\n`);
  });
  await new Promise<void>((resolve) => policyServer.listen(0, POLICY_HOST, () => resolve()));

  dns.set('mail.mailer.test', 'A', ['127.0.0.1']);
  for (const [domain, { mx: host, ip, policy }] of Object.entries(DOMAINS)) {
    dns.set(domain, 'MX', [{ exchange: host, priority: 10 }]);
    dns.set(host, 'A', [ip]);
    if (policy === null) continue;
    dns.set(`_mta-sts.${domain}`, 'TXT', ['v=STSv1; id=20261128']);
    dns.set(`mta-sts.${domain}`, 'A', [POLICY_HOST]);
  }

  d = await createDeployment('mta-sts');
  const caFile = path.join(d.dataDir, 'test-ca.pem');
  await fs.writeFile(caFile, ca.cert);
  const env = {
    ...d.env('all'),
    MAILER_DELIVERY: 'direct',
    MAILER_DNS_SERVERS: dns.servers,
    MAILER_HOSTNAME: 'mail.mailer.test',
    MAILER_MX_PORT: String(mx.port),
    MAILER_MX_ALLOW_PRIVATE: '1',
    MAILER_MTA_STS: '1',
    MAILER_MTA_STS_PORT: String((policyServer.address() as AddressInfo).port),
    MAILER_SMTP_RETRY_ATTEMPTS: '1',
    MAILER_SMTP_RETRY_FIRST_SECONDS: '1',
    NODE_EXTRA_CA_CERTS: caFile,
  };
  const child = spawnService('mta-sts', env);
  await waitReady(d.baseUrl, child);
  const adminUrl = `${d.baseUrl}/v1/mail/admin`;
  const key = await newKey(adminUrl, 'mta-sts');
  // What the deliverability helpers read of a stack: its URLs, key and account.
  stack = { api: d.api, admin: adminUrl, apiKey: key.key, accountId: key.accountId } as Stack;
  // Direct delivery sends only from a domain whose DKIM record checks out: published and verified as an owner would.
  const created = await admin<DomainView>(stack, 'POST', `/accounts/${key.accountId}/domains`, { name: SENDER });
  publishRecords(dns, created.body.dns_records);
  expect((await admin<DomainView>(stack, 'POST', `/domains/${created.body.id}/verify`, {})).body.verified).toBe(true);
}, 180_000);

afterAll(async () => {
  await killAll();
  await d?.sink.close();
  await new Promise<void>((resolve) => (policyServer ? policyServer.close(() => resolve()) : resolve()));
  await mx?.close();
  await dns?.close();
});

beforeEach(() => {
  onTestFailed(() => console.error(childLogs()));
});

const send = (domain: string) => sendEmail(stack, { from: `STS <x@${SENDER}>`, to: [`user@${domain}`] });
const receivedFor = (domain: string) =>
  mx.hosts
    .flatMap((h) => h.received.map((r) => ({ ...r, host: h.address })))
    .filter((r) => r.envelopeTo.includes(`user@${domain}`));
const deliveryOf = (detail: Awaited<ReturnType<typeof waitForStatus>>) =>
  detail.events.find((e) => e.type === 'delivery')?.data;

describe('MTA-STS in direct delivery', () => {
  it('enforce: delivered over TLS to a listed MX whose certificate verifies for its name', async () => {
    const id = await send('enforce-good.test');
    const detail = await waitForStatus(stack, id, ['delivered', 'bounced']);
    expect(detail.email.status).toBe('delivered');
    expect(deliveryOf(detail)).toMatchObject({
      tls_verified: true,
      tls_version: expect.stringMatching(/^TLSv1\.[23]$/),
    });
    expect(receivedFor('enforce-good.test')).toMatchObject([
      { host: GOOD_MX, secure: true, servername: 'mx.good.test' },
    ]);
  });

  it('enforce with a one-label wildcard: the same', async () => {
    const id = await send('enforce-wild.test');
    const detail = await waitForStatus(stack, id, ['delivered', 'bounced']);
    expect(deliveryOf(detail)).toMatchObject({ tls_verified: true });
  });

  it('enforce: a self-signed MX certificate is never given the message; deferred with 4.7.5', async () => {
    const id = await send('enforce-bad.test');
    const detail = await waitForStatus(stack, id, ['delivered', 'bounced']);
    expect(detail.email.status).toBe('bounced');
    expect(detail.events.find((e) => e.type === 'bounce')?.data).toMatchObject({
      bounce_type: 'Transient',
      bounced_recipients: [
        {
          email_address: 'user@enforce-bad.test',
          status: '4.7.5',
          diagnostic_code: expect.stringContaining('MTA-STS'),
        },
      ],
    });
    expect(receivedFor('enforce-bad.test')).toEqual([]);
  });

  it('enforce: an MX the policy does not list is not connected to; deferred with 4.7.5', async () => {
    const before = mx.hosts.find((h) => h.address === GOOD_MX)!.connections;
    const id = await send('enforce-unlisted.test');
    const detail = await waitForStatus(stack, id, ['delivered', 'bounced']);
    expect(detail.email.status).toBe('bounced');
    expect(JSON.stringify(detail.events.find((e) => e.type === 'bounce')?.data)).toContain(
      '4.7.5 MTA-STS: enforce-unlisted.test: MX mx.good.test not listed',
    );
    expect(receivedFor('enforce-unlisted.test')).toEqual([]);
    expect(mx.hosts.find((h) => h.address === GOOD_MX)!.connections).toBe(before);
  });

  it('testing: delivered despite the self-signed certificate, not verified', async () => {
    const id = await send('testing-bad.test');
    const detail = await waitForStatus(stack, id, ['delivered', 'bounced']);
    expect(detail.email.status).toBe('delivered');
    expect(deliveryOf(detail)).toMatchObject({ tls_verified: false, tls_version: expect.stringMatching(/^TLSv1/) });
    expect(receivedFor('testing-bad.test')).toHaveLength(1);
  });

  it('none, and no policy at all: delivered as before (opportunistic TLS)', async () => {
    for (const domain of ['none-bad.test', 'plain.test']) {
      const id = await send(domain);
      const detail = await waitForStatus(stack, id, ['delivered', 'bounced']);
      expect(detail.email.status, domain).toBe('delivered');
      expect(deliveryOf(detail), domain).toMatchObject({ tls_verified: false });
      expect(receivedFor(domain), domain).toMatchObject([{ host: BAD_MX, secure: true }]);
    }
  });
});
