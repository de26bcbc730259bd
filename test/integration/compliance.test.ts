import { afterAll, describe, expect, it } from 'vitest';
import { createUnsubscribeTokens } from '../../src/delivery/message/unsubscribe-token.js';
import { admin, createAccount } from '../helpers/admin-fixtures.js';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.js';
import { bearer, ok, rpc, useGrpcClients } from '../helpers/grpc-client.js';
import { call, eventually } from '../helpers/http.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { trackingKeyOf } from '../helpers/stack-secrets.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * Compliance at a glance (issue 25): per domain, whether a DMARC policy covers it (looked up in a real DNS
 * server with the other records); per account, the last 7 days' complaint and unsubscribe rates per stream
 * against the 0.3 % line, from the mailbox simulator's real complaint and a real one-click unsubscribe.
 */
let zone: DnsServer;
const stack = useStack(async () => {
  zone = await startDnsServer();
  // No SMTP_URL: the built-in catcher delivers, and its simulator mails a complaint back.
  return { MAILER_DNS_SERVERS: zone.servers, SMTP_URL: '', MAILER_CATCHER_PORT: '0' };
});
const clients = useGrpcClients(stack);
afterAll(async () => zone?.close());

interface Dmarc {
  published: boolean;
  policy: string | null;
  record_name: string;
}
type Domain = { id: string; name: string; dmarc: Dmarc };
const verify = async (id: string) => (await admin<Domain>(stack, 'POST', `/domains/${id}/verify`, {})).body;

describe('DMARC per domain', () => {
  it('is not published until the check finds a record; then its policy and where it was found', async () => {
    const accountId = await createAccount(stack, 'dmarc owner');
    const domain = (await admin<Domain>(stack, 'POST', `/accounts/${accountId}/domains`, { name: 'own.example' })).body;
    expect(domain.dmarc).toEqual({ published: false, policy: null, record_name: '' });
    expect((await verify(domain.id)).dmarc).toEqual({ published: false, policy: null, record_name: '' });

    zone.set('_dmarc.own.example', 'TXT', ['v=DMARC1; p=quarantine; rua=mailto:d@own.example']);
    expect((await verify(domain.id)).dmarc).toEqual({
      published: true,
      policy: 'quarantine',
      record_name: '_dmarc.own.example',
    });
    // Shown with the domain wherever it is listed, and over gRPC (the policy a string Value).
    const listed = await admin<{ domains: Domain[] }>(stack, 'GET', `/accounts/${accountId}/domains`);
    expect(listed.body.domains.find((d) => d.id === domain.id)?.dmarc.policy).toBe('quarantine');
    const overGrpc = ok(await rpc(clients.admin, 'ListDomains', { account_id: accountId }, bearer(ADMIN_TOKEN)));
    expect((overGrpc.domains as { dmarc: Record<string, unknown> }[])[0]!.dmarc).toMatchObject({
      published: true,
      policy: { stringValue: 'quarantine' },
      record_name: '_dmarc.own.example',
    });

    // Two DMARC records are as good as none (RFC 7489 6.6.3).
    zone.set('_dmarc.own.example', 'TXT', ['v=DMARC1; p=none', 'v=DMARC1; p=reject']);
    expect((await verify(domain.id)).dmarc).toEqual({ published: false, policy: null, record_name: '' });
  });

  it("covers a subdomain by its parent's record (sp=, else p=)", async () => {
    const accountId = await createAccount(stack, 'dmarc parent');
    zone.set('_dmarc.parent.example', 'TXT', ['v=DMARC1; p=reject; sp=none']);
    const sub = (
      await admin<Domain>(stack, 'POST', `/accounts/${accountId}/domains`, { name: 'news.mail.parent.example' })
    ).body;
    expect((await verify(sub.id)).dmarc).toEqual({
      published: true,
      policy: 'none',
      record_name: '_dmarc.parent.example',
    });
    const top = (await admin<Domain>(stack, 'POST', `/accounts/${accountId}/domains`, { name: 'parent.example' })).body;
    expect((await verify(top.id)).dmarc).toMatchObject({ published: true, policy: 'reject' });
  });
});

describe('compliance per account', () => {
  interface StreamCompliance {
    stream: string;
    sent: number;
    complained: number;
    unsubscribed: number;
    complaint_rate: number;
    unsubscribe_rate: number;
    over_complaint_limit: boolean;
  }
  interface Compliance {
    window_days: number;
    complaint_rate_limit: number;
    streams: StreamCompliance[];
  }
  const account = async () =>
    (await call('GET', `${stack.admin}/accounts/${stack.accountId}`, { token: ADMIN_TOKEN })).body as {
      compliance: Compliance;
    };
  const send = async (body: Record<string, unknown>) => {
    const res = await call('POST', `${stack.api}/emails`, {
      token: stack.apiKey,
      body: { from: 'news@example.com', subject: 'News', text: 'hi', ...body },
    });
    expect(res.status, res.text).toBe(200);
    return res.body.id as string;
  };
  const statusOf = async (id: string) =>
    (await call('GET', `${stack.api}/emails/${id}`, { token: stack.apiKey })).body.status;

  it("gives each stream's 7-day complaint and unsubscribe rates against the 0.3 % line", async () => {
    const transactional = await send({ to: ['success@simulator.mailer.test'] });
    const complained = await send({ to: ['complaint@simulator.mailer.test'], stream: 'broadcast' });
    const unsubscribed = await send({ to: ['success+reader@simulator.mailer.test'], stream: 'broadcast' });
    await eventually(async () => (await statusOf(complained)) === 'complained', 30_000);
    for (const id of [transactional, unsubscribed]) await eventually(async () => (await statusOf(id)) === 'delivered');

    // A real one-click unsubscribe of the third email.
    const token = createUnsubscribeTokens(await trackingKeyOf(stack.mailer)).sign(unsubscribed);
    const posted = await fetch(`${stack.mailer.restUrl}/u/${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });
    expect(posted.status).toBe(200);

    const { compliance } = await account();
    expect(compliance).toEqual({
      window_days: 7,
      complaint_rate_limit: 0.003,
      streams: [
        {
          stream: 'transactional',
          sent: 1,
          complained: 0,
          unsubscribed: 0,
          complaint_rate: 0,
          unsubscribe_rate: 0,
          over_complaint_limit: false,
        },
        {
          stream: 'broadcast',
          sent: 2,
          complained: 1,
          unsubscribed: 1,
          complaint_rate: 0.5,
          unsubscribe_rate: 0.5,
          over_complaint_limit: true,
        },
      ],
    });

    // gRPC answers the same figures.
    const overGrpc = ok(await rpc(clients.admin, 'GetAccount', { id: stack.accountId }, bearer(ADMIN_TOKEN)));
    const streams = (overGrpc.compliance as { streams: Record<string, unknown>[] }).streams;
    expect(streams.map((s) => [s.stream, s.sent, s.complained, s.unsubscribed, s.over_complaint_limit])).toEqual([
      ['transactional', 1, 0, 0, false],
      ['broadcast', 2, 1, 1, true],
    ]);
  });
});
