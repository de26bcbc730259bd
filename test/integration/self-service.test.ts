import * as grpc from '@grpc/grpc-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, createAccount, createKey } from '../helpers/admin-fixtures.js';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.js';
import { bearer, expectSameError, failed, ok, rpc, useGrpcClients } from '../helpers/grpc-client.js';
import { call, eventually, validEmail, type JsonResponse } from '../helpers/http.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { ISO_MS as ISO } from '../helpers/time.js';
import { useStack } from '../helpers/use-stack.js';
import { WEBHOOKS_MAX } from '../../src/services/webhooks-service.js';
import { DOMAINS_MAX } from '../../src/services/domains-service.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * CONTRACT.md "Self-service": an account runs its domains and webhooks with its own key, against a real DNS
 * server (the domain's records published as the API lists them) and a real webhook receiver, over REST and gRPC.
 */

interface DnsRecord {
  type: string;
  name: string;
  value: string;
  purpose: string;
  status: string;
}
interface Domain {
  id: string;
  name: string;
  verified: boolean;
  dns_records: DnsRecord[];
  open_tracking: boolean;
  click_tracking: boolean;
}
interface Webhook {
  id: string;
  url: string;
  events: string[];
  created_at: string;
  secret?: string;
  previous_secret_until?: string;
  disabled_at?: string;
}
interface Delivery {
  id: string;
  webhook_id: string;
  event_type: string;
  status: string;
  attempts: { attempt: number; status_code: number }[];
}

const HOSTNAME = 'mx.selfservice.test';
let zone: DnsServer;
let receiver: WebhookReceiver;
const stack = useStack(async () => {
  zone = await startDnsServer();
  return { MAILER_DNS_SERVERS: zone.servers, MAILER_HOSTNAME: HOSTNAME, MAILER_WEBHOOK_ALLOW_PRIVATE: '1' };
});
const clients = useGrpcClients(stack);
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await zone?.close();
});

/** A public API call with `key`. */
const api = <T = Record<string, unknown>>(key: string, method: string, path: string, body?: unknown) =>
  call<T>(method, `${stack.api}${path}`, { token: key, ...(body !== undefined ? { body } : {}) });

function expect200<T>(res: JsonResponse<T>, what: string): T {
  expect(res.status, `${what}: ${res.text}`).toBe(200);
  return res.body;
}

/** Publishes a domain's records in the test DNS server as its owner would, from the API's list. */
function publish(records: DnsRecord[]) {
  for (const r of records) {
    if (r.type === 'MX') {
      const [priority, exchange] = r.value.split(' ');
      zone.set(r.name, 'MX', [{ exchange: exchange!, priority: Number(priority) }]);
    } else zone.set(r.name, 'TXT', [r.value]);
  }
}

/** A new account (made by the operator, as `npm start` makes the first) and keys of each permission. */
async function newAccount(name: string) {
  const accountId = await createAccount(stack, name);
  const all = (await createKey(stack, accountId, 'all')).key;
  const readOnly = (await createKey(stack, accountId, 'read_only')).key;
  const sendOnly = (await createKey(stack, accountId, 'send_only')).key;
  return { accountId, all, readOnly, sendOnly };
}

/** A domain added and verified with the account's own key against the real DNS server. */
async function verifiedDomain(key: string, name: string): Promise<Domain> {
  const created = expect200(await api<Domain>(key, 'POST', '/domains', { name }), 'add');
  publish(created.dns_records);
  const verified = expect200(await api<Domain>(key, 'POST', `/domains/${created.id}/verify`, {}), 'verify');
  expect(verified.verified).toBe(true);
  return verified;
}

const db = () => postgres(stack.databaseUrl, { max: 1, onnotice: () => {} });

describe('the account itself', () => {
  it('GET /account answers any key its own account, as the management API shows it', async () => {
    const a = await newAccount('self acct');
    const operator = (await admin(stack, 'GET', `/accounts/${a.accountId}`)).body;
    for (const key of [a.all, a.readOnly, a.sendOnly]) {
      const own = expect200(await api(key, 'GET', '/account'), 'GET /account');
      expect(own).toMatchObject({
        id: a.accountId,
        name: 'self acct',
        status: 'healthy',
        daily_quota: 100,
        sent_today: 0,
        bounce_rate: 0,
        complaint_rate: 0,
        created_at: expect.stringMatching(ISO),
      });
      expect(own).toEqual(operator);
    }
    expect((await call('GET', `${stack.api}/account`)).status).toBe(401);
  });
});

describe('domains with the account key', () => {
  it('adds a domain, lists its records, verifies it by DNS, toggles tracking, rotates DKIM, then deletes it with its routes', async () => {
    const a = await newAccount('domains owner');
    const created = expect200(await api<Domain>(a.all, 'POST', '/domains', { name: 'Owner.Selfservice.Test' }), 'add');
    expect(created).toMatchObject({
      id: expect.stringMatching(/^dom_/),
      name: 'owner.selfservice.test',
      verified: false,
    });
    expect(created.dns_records.map((r) => `${r.purpose}:${r.status}`)).toEqual([
      'ownership:pending',
      'spf:pending',
      'dkim:pending',
      'return_path:pending',
      'return_path_spf:pending',
      'dmarc:pending',
    ]);
    const listed = expect200(
      await api<{ domains: Domain[]; total: number }>(a.readOnly, 'GET', '/domains'),
      'list with read_only',
    );
    expect(listed).toEqual({ domains: [created], total: 1 });
    expect(expect200(await api<Domain>(a.readOnly, 'GET', `/domains/${created.id}`), 'get')).toEqual(created);

    // Nothing published yet: the check finds nothing, and the domain stays unverified.
    const early = expect200(await api<Domain>(a.all, 'POST', `/domains/${created.id}/verify`, {}), 'verify early');
    expect(early.verified).toBe(false);
    expect(early.dns_records.find((r) => r.purpose === 'ownership')!.status).toBe('pending');
    // force is the operator's alone.
    const forced = await api(a.all, 'POST', `/domains/${created.id}/verify`, { force: true });
    expect(forced.status).toBe(403);
    expect(forced.body).toEqual({
      error: 'permission denied',
      message: expect.stringMatching(/force is the operator's/),
    });
    expect((await api<Domain>(a.all, 'GET', `/domains/${created.id}`)).body.verified).toBe(false);

    publish(created.dns_records);
    const verified = expect200(await api<Domain>(a.all, 'POST', `/domains/${created.id}/verify`, {}), 'verify');
    expect(verified.verified).toBe(true);
    for (const purpose of ['ownership', 'spf', 'dkim'])
      expect(verified.dns_records.find((r) => r.purpose === purpose)!.status, purpose).toBe('verified');
    // The first verified domain raises the new account's quota, as it does for the operator's verify.
    expect((await api<{ daily_quota: number }>(a.sendOnly, 'GET', '/account')).body.daily_quota).toBe(1000);

    const tracked = expect200(
      await api<Domain>(a.all, 'PATCH', `/domains/${created.id}`, { open_tracking: true }),
      'tracking',
    );
    expect([tracked.open_tracking, tracked.click_tracking]).toEqual([true, false]);
    const both = expect200(
      await api<Domain>(a.all, 'PATCH', `/domains/${created.id}`, { click_tracking: true }),
      'both',
    );
    expect([both.open_tracking, both.click_tracking]).toEqual([true, true]);

    const rotated = expect200(await api<Domain>(a.all, 'POST', `/domains/${created.id}/dkim/rotate`, {}), 'rotate');
    expect(rotated.dns_records.filter((r) => r.purpose === 'dkim')).toHaveLength(2);
    const again = await api(a.all, 'POST', `/domains/${created.id}/dkim/rotate`, {});
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ error: 'conflict' });

    // What the domain has when it goes: an inbound route, an email sent, a scheduled email from it (and one from
    // another domain of the account, which stays).
    const kept = await verifiedDomain(a.all, 'kept.selfservice.test');
    const route = expect200(
      await api<{ id: string }>(a.all, 'POST', '/inbound/routes', { match: 'support@owner.selfservice.test' }),
      'route',
    );
    const sent = expect200(
      await api<{ id: string }>(a.all, 'POST', '/emails', validEmail({ from: 'me@owner.selfservice.test' })),
      'send',
    );
    const scheduled = expect200(
      await api<{ id: string }>(a.all, 'POST', '/emails/schedule', {
        ...validEmail({ from: 'me@owner.selfservice.test' }),
        scheduled_at: new Date(Date.now() + 3_600_000).toISOString(),
      }),
      'schedule',
    );
    const otherScheduled = expect200(
      await api<{ id: string }>(a.all, 'POST', '/emails/schedule', {
        ...validEmail({ from: 'me@kept.selfservice.test' }),
        scheduled_at: new Date(Date.now() + 3_600_000).toISOString(),
      }),
      'schedule from another domain',
    ).id;

    const deleted = expect200(await api(a.all, 'DELETE', `/domains/${created.id}`), 'delete');
    expect(deleted).toEqual({
      success: true,
      message: `domain ${created.id} (owner.selfservice.test) deleted; 1 inbound route(s) deleted, 1 scheduled email(s) from it cancelled`,
    });
    const after = expect200(await api<{ domains: Domain[]; total: number }>(a.all, 'GET', '/domains'), 'list after');
    expect([after.domains.map((d) => d.name), after.total]).toEqual([[kept.name], 1]);
    expect((await api(a.all, 'GET', `/domains/${created.id}`)).body).toEqual({
      error: 'not found',
      message: `domain ${created.id} not found`,
    });
    expect((await api(a.all, 'DELETE', `/domains/${created.id}`)).status).toBe(404);
    expect(expect200(await api(a.all, 'GET', '/inbound/routes'), 'routes after')).toEqual({ routes: [], total: 0 });
    expect((await api(a.all, 'DELETE', `/inbound/routes/${route.id}`)).status).toBe(404);
    expect((await api<{ status: string }>(a.all, 'GET', `/emails/scheduled/${scheduled.id}`)).body.status).toBe(
      'cancelled',
    );
    expect((await api<{ status: string }>(a.all, 'GET', `/emails/scheduled/${otherScheduled}`)).body.status).toBe(
      'enqueued',
    );
    expect((await api(a.all, 'GET', `/emails/${sent.id}`)).status).toBe(200);
    const sql = db();
    try {
      expect((await sql`select count(*)::int as n from dkim_keys where domain_id = ${created.id}`)[0]!.n).toBe(0);
    } finally {
      await sql.end();
    }
    // Sending from it again is refused: the account no longer has the domain.
    const refused = await api(a.all, 'POST', '/emails', validEmail({ from: 'me@owner.selfservice.test' }));
    expect(refused.status).toBe(403);
  });

  it('lists a page at a time with the total; bad bodies and pages are a 400 in {error, message}', async () => {
    const a = await newAccount('paging');
    const ids: string[] = [];
    for (const n of [1, 2, 3])
      ids.push(expect200(await api<Domain>(a.all, 'POST', '/domains', { name: `p${n}.paging.test` }), 'add').id);
    const first = expect200(
      await api<{ domains: Domain[]; total: number }>(a.all, 'GET', '/domains?page_size=2'),
      'p1',
    );
    expect([first.domains.map((d) => d.id), first.total]).toEqual([ids.slice(0, 2), 3]);
    const second = expect200(
      await api<{ domains: Domain[]; total: number }>(a.all, 'GET', '/domains?page=2&page_size=2'),
      'p2',
    );
    expect([second.domains.map((d) => d.id), second.total]).toEqual([ids.slice(2), 3]);
    // The management API lists the same pages.
    const operator = (await admin(stack, 'GET', `/accounts/${a.accountId}/domains?page=2&page_size=2`)).body;
    expect(operator).toEqual(second);

    const bad: [string, string, unknown, RegExp][] = [
      ['POST', '/domains', {}, /name/],
      ['POST', '/domains', { name: 'not a domain' }, /name/],
      ['POST', '/domains', { name: 'p1.paging.test' }, /already added/],
      ['GET', '/domains?page_size=1000', undefined, /page_size/],
      ['PATCH', `/domains/${ids[0]}`, { open_tracking: 'yes' }, /open_tracking/],
      ['POST', '/webhooks', { url: 'ftp://example.com/x', events: ['send'] }, /url/],
      ['POST', '/webhooks', { url: `${receiver.url}/x`, events: [] }, /events/],
      ['POST', '/webhooks', { url: `${receiver.url}/x`, events: ['sent'] }, /events\[0\]/],
      ['GET', '/webhooks?page=-1', undefined, /page/],
    ];
    for (const [method, path, body, message] of bad) {
      const res = await api(a.all, method, path, body);
      expect(res.status, `${method} ${path} ${res.text}`).toBe(400);
      expect(res.body, `${method} ${path}`).toEqual({
        error: 'validation error',
        message: expect.stringMatching(message),
      });
    }
  });
});

describe('webhooks with the account key', () => {
  it('creates a webhook (secret once), verifies it, sees and resends its deliveries, rotates, enables, deletes', async () => {
    const a = await newAccount('hooks owner');
    await verifiedDomain(a.all, 'hooks.selfservice.test');
    const url = `${receiver.url}/self-hooks`;
    const created = expect200(
      await api<Webhook>(a.all, 'POST', '/webhooks', { url, events: ['send', 'delivery'] }),
      'create',
    );
    expect(created).toEqual({
      id: expect.stringMatching(/^wh_/),
      url,
      events: ['send', 'delivery'],
      created_at: expect.stringMatching(ISO),
      secret: expect.stringMatching(/^whsec_/),
    });
    const listed = await api<{ webhooks: Webhook[]; total: number }>(a.readOnly, 'GET', '/webhooks');
    expect(expect200(listed, 'list')).toEqual({ webhooks: [{ ...created, secret: undefined }], total: 1 });
    expect(listed.text).not.toContain(created.secret!);

    const verified = expect200(await api(a.all, 'POST', `/webhooks/${created.id}/verify`, {}), 'verify');
    expect(verified).toEqual({ success: true, status_code: 200 });
    expect(receiver.on('/self-hooks').map((h) => h.headers['x-mail-event'])).toEqual(['test']);

    const sent = expect200(
      await api<{ id: string }>(a.all, 'POST', '/emails', validEmail({ from: 'me@hooks.selfservice.test' })),
      'send',
    );
    const deliveries = await eventually(async () => {
      const r = await api<{ deliveries: Delivery[] }>(a.readOnly, 'GET', `/webhooks/${created.id}/deliveries`);
      const done = r.body.deliveries.filter((d) => d.status === 'succeeded');
      return done.length === 2 ? r.body.deliveries : undefined;
    });
    expect(deliveries.map((d) => d.event_type).sort()).toEqual(['delivery', 'send']);
    const onlySend = await api<{ deliveries: Delivery[] }>(a.all, 'GET', `/webhooks/${created.id}/deliveries?limit=1`);
    expect(expect200(onlySend, 'limit').deliveries).toHaveLength(1);

    const delivery = deliveries.find((d) => d.event_type === 'send')!;
    const resent = expect200(
      await api<Delivery>(a.all, 'POST', `/webhook-deliveries/${delivery.id}/resend`, {}),
      'resend',
    );
    expect(resent).toMatchObject({ id: delivery.id, status: 'pending' });
    await eventually(async () =>
      receiver.on('/self-hooks').filter((h) => h.headers['x-mail-delivery-id'] === delivery.id).length === 2
        ? true
        : undefined,
    );
    const range = expect200(
      await api(a.all, 'POST', `/webhooks/${created.id}/resend`, {
        from: new Date(Date.now() - 3_600_000).toISOString(),
      }),
      'resend range',
    );
    expect(range).toEqual({ queued: 0, has_more: false });

    const rotated = expect200(
      await api<Webhook>(a.all, 'POST', `/webhooks/${created.id}/rotate-secret`, { overlap_seconds: 60 }),
      'rotate',
    );
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(created.secret);
    expect(rotated.previous_secret_until).toMatch(ISO);
    const afterRotation = await api(a.all, 'GET', '/webhooks');
    expect(afterRotation.text).not.toContain(rotated.secret!);
    const enabled = expect200(await api<Webhook>(a.all, 'POST', `/webhooks/${created.id}/enable`, {}), 'enable');
    expect(enabled).toMatchObject({ id: created.id, url });
    expect(enabled.secret).toBeUndefined();
    expect(enabled.disabled_at).toBeUndefined();

    expect(expect200(await api(a.all, 'DELETE', `/webhooks/${created.id}`), 'delete')).toEqual({
      success: true,
      message: `webhook ${created.id} deleted`,
    });
    expect(expect200(await api(a.all, 'GET', '/webhooks'), 'list after')).toEqual({ webhooks: [], total: 0 });
    expect((await api(a.all, 'DELETE', `/webhooks/${created.id}`)).body).toEqual({
      error: 'not found',
      message: `webhook ${created.id} not found`,
    });
    expect(sent.id).toMatch(/^em_/);
  });

  it('lists webhooks a page at a time with the total, as the management API does', async () => {
    const a = await newAccount('hooks paging');
    const ids: string[] = [];
    for (const n of [1, 2, 3])
      ids.push(
        expect200(
          await api<Webhook>(a.all, 'POST', '/webhooks', { url: `${receiver.url}/p${n}`, events: ['send'] }),
          'add',
        ).id,
      );
    const page = expect200(
      await api<{ webhooks: Webhook[]; total: number }>(a.all, 'GET', '/webhooks?page=1&page_size=2'),
      'p1',
    );
    expect([page.webhooks.map((w) => w.id), page.total]).toEqual([ids.slice(0, 2), 3]);
    const operator = (
      await admin<{ webhooks: Webhook[]; total: number }>(
        stack,
        'GET',
        `/accounts/${a.accountId}/webhooks?page=2&page_size=2`,
      )
    ).body;
    expect([operator.webhooks.map((w) => w.id), operator.total]).toEqual([ids.slice(2), 3]);
  });
});

describe('the most webhooks an account may have', () => {
  it(`an account has at most ${WEBHOOKS_MAX} live webhooks, by its key or the operator's; deleting one makes room`, async () => {
    const a = await newAccount('many hooks');
    const ids: string[] = [];
    for (let n = 0; n < WEBHOOKS_MAX; n++)
      ids.push(
        expect200(
          await api<Webhook>(a.all, 'POST', '/webhooks', { url: `${receiver.url}/many${n}`, events: ['send'] }),
          `webhook ${n}`,
        ).id,
      );
    const full = { url: `${receiver.url}/one-more`, events: ['send'] };
    const refused = await api(a.all, 'POST', '/webhooks', full);
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      error: 'validation error',
      message: `the account has ${WEBHOOKS_MAX} webhooks, the most it may have: delete one first`,
    });
    await admin(stack, 'POST', `/accounts/${a.accountId}/webhooks`, full, 400);
    expect((await api<{ total: number }>(a.all, 'GET', '/webhooks')).body.total).toBe(WEBHOOKS_MAX);
    expect200(await api(a.all, 'DELETE', `/webhooks/${ids[0]}`), 'delete');
    expect200(await api(a.all, 'POST', '/webhooks', full), 'room again');
  });
});

describe('the most domains an account may have', () => {
  it(`an account has at most ${DOMAINS_MAX} domains, by its key or the operator's; deleting one makes room`, async () => {
    const a = await newAccount('many domains');
    // All but one put in directly: each added through the API makes a DKIM key pair, which is the point of the cap.
    const sql = postgres(stack.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      await sql`insert into domains (id, account_id, name, verification_token)
        select 'dom_many' || n, ${a.accountId}, 'd' || n || '.many.test', 'token'
        from generate_series(1, ${DOMAINS_MAX - 1}) n`;
    } finally {
      await sql.end();
    }
    const last = expect200(await api<Domain>(a.all, 'POST', '/domains', { name: 'last.many.test' }), 'the last one');
    const refused = await api(a.all, 'POST', '/domains', { name: 'one-more.many.test' });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      error: 'validation error',
      message: `the account has ${DOMAINS_MAX} domains, the most it may have: delete one first`,
    });
    await admin(stack, 'POST', `/accounts/${a.accountId}/domains`, { name: 'one-more.many.test' }, 400);
    // A name it has is still told apart from a full account.
    const again = await api(a.all, 'POST', '/domains', { name: 'last.many.test' });
    expect(again.body).toMatchObject({ message: 'name: the domain last.many.test is already added to this account' });
    expect200(await api(a.all, 'DELETE', `/domains/${last.id}`), 'delete');
    expect200(await api(a.all, 'POST', '/domains', { name: 'one-more.many.test' }), 'room again');
  });
});

describe('permissions', () => {
  it('a read_only key reads domains and webhooks but changes nothing; a send_only key reads neither', async () => {
    const a = await newAccount('perms');
    const domain = expect200(await api<Domain>(a.all, 'POST', '/domains', { name: 'perms.selfservice.test' }), 'add');
    const hook = expect200(
      await api<Webhook>(a.all, 'POST', '/webhooks', { url: `${receiver.url}/perms`, events: ['send'] }),
      'hook',
    );
    const reads: [string, string][] = [
      ['GET', '/domains'],
      ['GET', `/domains/${domain.id}`],
      ['GET', '/webhooks'],
      ['GET', `/webhooks/${hook.id}/deliveries`],
    ];
    const writes: [string, string, unknown][] = [
      ['POST', '/domains', { name: 'other.perms.selfservice.test' }],
      ['DELETE', `/domains/${domain.id}`, undefined],
      ['PATCH', `/domains/${domain.id}`, { open_tracking: true }],
      ['POST', `/domains/${domain.id}/verify`, {}],
      ['POST', `/domains/${domain.id}/dkim/rotate`, {}],
      ['POST', '/webhooks', { url: `${receiver.url}/perms2`, events: ['send'] }],
      ['DELETE', `/webhooks/${hook.id}`, undefined],
      ['POST', `/webhooks/${hook.id}/verify`, {}],
      ['POST', `/webhooks/${hook.id}/rotate-secret`, {}],
      ['POST', `/webhooks/${hook.id}/enable`, {}],
      ['POST', `/webhooks/${hook.id}/resend`, { from: '2026-01-01T00:00:00Z' }],
      ['POST', '/webhook-deliveries/whd_any/resend', {}],
    ];
    for (const [method, path] of reads) {
      expect((await api(a.readOnly, method, path)).status, `read_only ${method} ${path}`).toBe(200);
      const refused = await api(a.sendOnly, method, path);
      expect(refused.status, `send_only ${method} ${path}`).toBe(403);
      expect(refused.body).toEqual({
        error: 'permission denied',
        message:
          "This API key (send_only) does not have permission to read the account's domains, API keys and webhooks",
      });
    }
    for (const [method, path, body] of writes) {
      for (const [name, key] of [
        ['read_only', a.readOnly],
        ['send_only', a.sendOnly],
      ] as const) {
        const refused = await api(key, method, path, body);
        expect(refused.status, `${name} ${method} ${path}`).toBe(403);
        expect(refused.body.message, `${name} ${method} ${path}`).toBe(
          `This API key (${name}) does not have permission to change the account's domains, API keys and webhooks`,
        );
      }
    }
    // Nothing changed, nothing was sent.
    expect((await api<Domain>(a.all, 'GET', `/domains/${domain.id}`)).body).toEqual(domain);
    expect((await api<{ total: number }>(a.all, 'GET', '/webhooks')).body.total).toBe(1);
    expect(receiver.on('/perms')).toEqual([]);
  });
});

describe('isolation between accounts', () => {
  it("another account's domain, webhook and delivery are a 404 worded as an unknown id's, on every route, and stay as they were", async () => {
    const owner = await newAccount('isolated owner');
    const intruder = await newAccount('intruder');
    const domain = await verifiedDomain(owner.all, 'isolated.selfservice.test');
    const hook = expect200(
      await api<Webhook>(owner.all, 'POST', '/webhooks', { url: `${receiver.url}/isolated`, events: ['send'] }),
      'hook',
    );
    await api(owner.all, 'POST', '/emails', validEmail({ from: 'me@isolated.selfservice.test' }));
    const delivery = await eventually(async () => {
      const r = await api<{ deliveries: Delivery[] }>(owner.all, 'GET', `/webhooks/${hook.id}/deliveries`);
      return r.body.deliveries.find((d) => d.status === 'succeeded');
    });

    const routes: [string, string, unknown, string][] = [
      ['GET', `/domains/${domain.id}`, undefined, `domain ${domain.id}`],
      ['DELETE', `/domains/${domain.id}`, undefined, `domain ${domain.id}`],
      ['PATCH', `/domains/${domain.id}`, { open_tracking: true }, `domain ${domain.id}`],
      ['POST', `/domains/${domain.id}/verify`, {}, `domain ${domain.id}`],
      ['POST', `/domains/${domain.id}/dkim/rotate`, {}, `domain ${domain.id}`],
      ['DELETE', `/webhooks/${hook.id}`, undefined, `webhook ${hook.id}`],
      ['POST', `/webhooks/${hook.id}/verify`, {}, `webhook ${hook.id}`],
      ['POST', `/webhooks/${hook.id}/rotate-secret`, {}, `webhook ${hook.id}`],
      ['POST', `/webhooks/${hook.id}/enable`, {}, `webhook ${hook.id}`],
      ['POST', `/webhooks/${hook.id}/resend`, { from: '2026-01-01T00:00:00Z' }, `webhook ${hook.id}`],
      ['GET', `/webhooks/${hook.id}/deliveries`, undefined, `webhook ${hook.id}`],
      ['POST', `/webhook-deliveries/${delivery.id}/resend`, {}, `webhook delivery ${delivery.id}`],
    ];
    for (const [method, path, body, what] of routes) {
      const res = await api(intruder.all, method, path, body);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body, `${method} ${path}`).toEqual({ error: 'not found', message: `${what} not found` });
      // Worded exactly as an id that does not exist.
      const unknown = await api(intruder.all, method, path.replace(/(dom|wh|whd)_[0-9a-z]+/, '$1_unknown'), body);
      expect(unknown.status).toBe(404);
      expect(String(unknown.body.message).replace(/(dom|wh|whd)_unknown/, 'ID')).toBe(
        String(res.body.message).replace(/(dom|wh|whd)_[0-9a-z]+/, 'ID'),
      );
    }
    // The intruder's lists do not show them; the owner's are untouched.
    expect((await api(intruder.all, 'GET', '/domains')).body).toEqual({ domains: [], total: 0 });
    expect((await api(intruder.all, 'GET', '/webhooks')).body).toEqual({ webhooks: [], total: 0 });
    const still = (await api<Domain>(owner.all, 'GET', `/domains/${domain.id}`)).body;
    expect([still.verified, still.open_tracking, still.dns_records.filter((r) => r.purpose === 'dkim').length]).toEqual(
      [true, false, 1],
    );
    expect((await api<{ total: number }>(owner.all, 'GET', '/webhooks')).body.total).toBe(1);
    expect(receiver.on('/isolated').filter((h) => h.headers['x-mail-event'] === 'test')).toEqual([]);
    const deliveries = (await api<{ deliveries: Delivery[] }>(owner.all, 'GET', `/webhooks/${hook.id}/deliveries`))
      .body;
    expect(deliveries.deliveries.find((d) => d.id === delivery.id)!.status).toBe('succeeded');

    // The operator reaches any account's domain by id.
    expect((await admin<Domain>(stack, 'GET', `/domains/${domain.id}`)).body).toEqual(still);
    const other = expect200(
      await api<Domain>(intruder.all, 'POST', '/domains', { name: 'isolated.selfservice.test' }),
      'same name',
    );
    const removed = await admin(stack, 'DELETE', `/domains/${other.id}`);
    expect(removed.body).toEqual({ success: true, message: `domain ${other.id} (isolated.selfservice.test) deleted` });
    expect((await api(intruder.all, 'GET', '/domains')).body).toEqual({ domains: [], total: 0 });
    expect((await api<Domain>(owner.all, 'GET', `/domains/${domain.id}`)).status).toBe(200);
    const gone = await call('GET', `${stack.admin}/domains/${other.id}`, { token: ADMIN_TOKEN });
    expect(gone.body).toEqual({ error: 'not found', message: `domain ${other.id} not found` });
  });
});

describe('over gRPC (the same handlers)', () => {
  it('CreateDomain, ListDomains, GetDomain, DeleteDomain, CreateWebhook and GetAccount; force and another account refused as over REST', async () => {
    const a = await newAccount('grpc self');
    const md = bearer(a.all);
    const created = ok(await rpc(clients.email, 'CreateDomain', { name: 'grpc.selfservice.test' }, md));
    expect(created).toMatchObject({
      id: expect.stringMatching(/^dom_/),
      name: 'grpc.selfservice.test',
      verified: false,
    });
    const listed = ok(await rpc(clients.email, 'ListDomains', { page: 1, page_size: 10 }, bearer(a.readOnly)));
    expect(listed.total).toBe(1);
    expect((listed.domains as { id: string }[]).map((d) => d.id)).toEqual([created.id]);
    const got = ok(await rpc(clients.email, 'GetDomain', { id: created.id }, md));
    expect(got.id).toBe(created.id);
    const rest = (await api<Domain>(a.all, 'GET', `/domains/${String(created.id)}`)).body;
    expect((got.dns_records as DnsRecord[]).map((r) => r.value)).toEqual(rest.dns_records.map((r) => r.value));

    const forced = failed(await rpc(clients.email, 'VerifyDomain', { id: created.id, force: true }, md));
    const forcedRest = await api<{ error: string; message: string }>(
      a.all,
      'POST',
      `/domains/${String(created.id)}/verify`,
      {
        force: true,
      },
    );
    expectSameError(forced, grpc.status.PERMISSION_DENIED, forcedRest.body);
    const intruder = await newAccount('grpc intruder');
    const hidden = failed(await rpc(clients.email, 'GetDomain', { id: created.id }, bearer(intruder.all)));
    expectSameError(hidden, grpc.status.NOT_FOUND, {
      error: 'not found',
      message: `domain ${String(created.id)} not found`,
    });
    const denied = failed(await rpc(clients.email, 'ListDomains', {}, bearer(a.sendOnly)));
    expect(denied.code).toBe(grpc.status.PERMISSION_DENIED);

    const deleted = ok(await rpc(clients.email, 'DeleteDomain', { id: created.id }, md));
    expect(deleted).toEqual({ success: true, message: `domain ${String(created.id)} (grpc.selfservice.test) deleted` });
    expect(ok(await rpc(clients.email, 'ListDomains', {}, md))).toEqual({ domains: [], total: 0 });

    const hook = ok(
      await rpc(clients.email, 'CreateWebhook', { url: `${receiver.url}/grpc`, events: ['send', 'bounce'] }, md),
    );
    expect(hook).toMatchObject({
      id: expect.stringMatching(/^wh_/),
      events: ['send', 'bounce'],
      secret: expect.stringMatching(/^whsec_/),
    });
    const hooks = (await api<{ webhooks: Webhook[]; total: number }>(a.all, 'GET', '/webhooks')).body;
    expect([hooks.webhooks.map((w) => w.id), hooks.total]).toEqual([[hook.id], 1]);

    const account = ok(await rpc(clients.email, 'GetAccount', {}, bearer(a.sendOnly)));
    expect(account).toMatchObject({ id: a.accountId, name: 'grpc self', status: 'healthy' });

    // The operator's AdminService GetDomain / DeleteDomain.
    const adminMd = bearer(ADMIN_TOKEN);
    const mine = ok(await rpc(clients.email, 'CreateDomain', { name: 'grpc2.selfservice.test' }, md));
    expect(ok(await rpc(clients.admin, 'GetDomain', { id: mine.id }, adminMd)).name).toBe('grpc2.selfservice.test');
    expect(ok(await rpc(clients.admin, 'DeleteDomain', { id: mine.id }, adminMd)).success).toBe(true);
    expect(failed(await rpc(clients.admin, 'GetDomain', { id: mine.id }, adminMd)).code).toBe(grpc.status.NOT_FOUND);
  });
});
