import * as grpc from '@grpc/grpc-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRepos } from '../../src/db/index.js';
import { loadEncryptionKey } from '../../src/secrets/encryption-key.js';
import { createKeyBox } from '../../src/secrets/key-box.js';
import { createInboundRoutesService, type InboundRoutesService } from '../../src/services/inbound-routes-service.js';
import { addDomain, admin, createAccount, createKey, createSender } from '../helpers/admin-fixtures.js';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.js';
import { bearer, expectSameError, failed, ok, rpc, useGrpcClients } from '../helpers/grpc-client.js';
import { call, expectValidationError, type JsonResponse } from '../helpers/http.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { ISO_MS as ISO } from '../helpers/time.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * Inbound routes (CONTRACT.md "Inbound mail") against the real stack: the REST and gRPC API over one service, the
 * management API's calls, the rules of a match (400s naming it, 409 across accounts), isolation between accounts,
 * the inbound MX record a routed domain lists and its check against a real DNS server, and resolve(), what the
 * inbound listener asks of every RCPT TO, over the stack's database.
 */
const HOSTNAME = 'mx.mailer.test';
let zone: DnsServer;
const stack = useStack(async () => {
  zone = await startDnsServer();
  return { MAILER_DNS_SERVERS: zone.servers, MAILER_HOSTNAME: HOSTNAME };
});
const clients = useGrpcClients(stack);
afterAll(async () => zone?.close());

type Route = {
  id: string;
  match: string;
  created_at: string;
};
type Listed = {
  routes: Route[];
  total: number;
};
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
  dns_failing_since: string;
}

const create = (key: string, match: unknown) =>
  call<Route & { error?: string; message?: string }>('POST', `${stack.api}/inbound/routes`, {
    token: key,
    body: match === undefined ? {} : { match },
  });
const list = (key: string, query = '') => call<Listed>('GET', `${stack.api}/inbound/routes${query}`, { token: key });
const remove = (key: string, id: string) =>
  call<{ success: boolean; message: string }>('DELETE', `${stack.api}/inbound/routes/${id}`, { token: key });

function expectError(res: JsonResponse, status: number, error: string, message?: RegExp): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body.error).toBe(error);
  if (message) expect(res.body.message).toMatch(message);
}

describe('the inbound routes API', () => {
  it('creates local@domain and *@domain on a verified domain or a subdomain, in key form; lists newest first; deletes', async () => {
    const a = await createSender(stack, 'routes a', 'routes-a.test');
    const first = await create(a.key, 'Support@Routes-A.TEST');
    expect(first.status, first.text).toBe(200);
    expect(first.body).toEqual({
      id: expect.stringMatching(/^rt_/),
      match: 'support@routes-a.test',
      created_at: expect.stringMatching(ISO),
    });
    const wildcard = await create(a.key, '*@In.Routes-A.test');
    expect(wildcard.body.match).toBe('*@in.routes-a.test');
    // An internationalised domain is stored in its ASCII form.
    await addDomain(stack, a.accountId, 'bücher-a.test');
    expect((await create(a.key, 'Hilfe@BÜCHER-a.test')).body.match).toBe('hilfe@xn--bcher-a-n2a.test');

    const listed = await list(a.key);
    expect(listed.status).toBe(200);
    expect(listed.body.total).toBe(3);
    expect(listed.body.routes.map((r) => r.match)).toEqual([
      'hilfe@xn--bcher-a-n2a.test',
      '*@in.routes-a.test',
      'support@routes-a.test',
    ]);
    expect(listed.body.routes[2]).toEqual(first.body);
    const paged = await list(a.key, '?page=2&page_size=2');
    expect(paged.body).toEqual({ routes: [first.body], total: 3 });
    expectValidationError(await list(a.key, '?page_size=101'), 'page_size over 100', /page_size/);

    const gone = await remove(a.key, wildcard.body.id);
    expect(gone.status, gone.text).toBe(200);
    expect(gone.body).toEqual({ success: true, message: `inbound route ${wildcard.body.id} deleted` });
    expectError(await remove(a.key, wildcard.body.id), 404, 'not found');
    expect((await list(a.key)).body.total).toBe(2);
    // Its match is free again.
    expect((await create(a.key, '*@in.routes-a.test')).status).toBe(200);
  });

  it('refuses a match that is not local@domain or *@domain on a verified domain of the account: 400 naming match', async () => {
    const a = await createSender(stack, 'rules a', 'rules-a.test');
    const b = await createSender(stack, 'rules b', 'rules-b.test');
    await addDomain(stack, a.accountId, 'unverified-a.test', false);
    const cases: [unknown, RegExp][] = [
      [undefined, /^match: is required/],
      ['', /^match: is required/],
      ['rules-a.test', /^match: "rules-a\.test" is not local@domain/],
      ['@rules-a.test', /^match: .*no local part/],
      ['support+tag@rules-a.test', /^match: .*no "\+"/],
      ['sup*@rules-a.test', /^match: .*"\*" stands only for the whole local part/],
      [`${'x'.repeat(65)}@rules-a.test`, /^match: the local part is longer than 64 characters/],
      ['a b@rules-a.test', /^match: must not contain spaces or control characters/],
      ['a\t@rules-a.test', /^match: must not contain spaces or control characters/],
      // NUL is refused before the service, as in every request string (storable-strings.ts).
      ['a\u0000@rules-a.test', /^match: must not contain NUL/],
      ['a@rules-a', /^match: "rules-a" is not a valid domain name/],
      [
        'b-sales@rules-a.test',
        /^match: .*starting with "b-" are the service's own return-path and unsubscribe addresses/,
      ],
      [
        'a@unverified-a.test',
        /^match: unverified-a\.test is not a verified domain of this account or a subdomain of one/,
      ],
      ['a@notrules-a.test', /^match: notrules-a\.test is not a verified domain of this account/],
    ];
    for (const [match, message] of cases) expectValidationError(await create(a.key, match), String(match), message);

    // Another account's verified domain is refused exactly as a domain nobody has: nothing tells them apart.
    const theirs = await create(a.key, 'a@rules-b.test');
    const nobodys = await create(a.key, 'a@nobody-at-all.test');
    expectValidationError(theirs, "another account's domain", /^match: rules-b\.test is not a verified domain/);
    expect(theirs.body.message!.replace('rules-b.test', 'D')).toBe(
      nobodys.body.message!.replace('nobody-at-all.test', 'D'),
    );
    expect((await list(b.key)).body.total).toBe(0);
    expect((await list(a.key)).body.total).toBe(0);
  });

  it('a match belongs to one account: the same match again, by any account, is a 409; another account cannot see or delete it', async () => {
    const a = await createSender(stack, 'shared a', 'shared-a.test');
    const b = await createSender(stack, 'shared b', 'shared-b.test');
    // Both accounts verified the same domain (each adds its own); the first to claim an address has it.
    await addDomain(stack, a.accountId, 'shared.test');
    await addDomain(stack, b.accountId, 'shared.test');
    const mine = await create(a.key, 'info@shared.test');
    expect(mine.status).toBe(200);
    expectError(
      await create(b.key, 'INFO@Shared.TEST'),
      409,
      'conflict',
      /^match: info@shared\.test is already routed$/,
    );
    expectError(await create(a.key, 'info@shared.test'), 409, 'conflict');
    // Another local part, and the wildcard, are other matches.
    expect((await create(b.key, '*@shared.test')).status).toBe(200);
    expect((await create(b.key, 'sales@shared.test')).status).toBe(200);

    expect((await list(b.key)).body.routes.map((r) => r.match)).toEqual(['sales@shared.test', '*@shared.test']);
    expect((await list(a.key)).body.routes.map((r) => r.match)).toEqual(['info@shared.test']);
    expectError(await remove(b.key, mine.body.id), 404, 'not found', new RegExp(`inbound route ${mine.body.id}`));
    expect((await list(a.key)).body.total).toBe(1);
  });

  it('writes need permission all; reads all or read_only', async () => {
    const a = await createSender(stack, 'perm a', 'perm-a.test');
    const route = (await create(a.key, 'perm@perm-a.test')).body;
    const readOnly = await createKey(stack, a.accountId, 'read_only');
    const sendOnly = await createKey(stack, a.accountId, 'send_only');
    expect((await list(readOnly.key)).body.routes).toEqual([route]);
    expectError(await create(readOnly.key, 'x@perm-a.test'), 403, 'permission denied', /change inbound routes/);
    expectError(await remove(readOnly.key, route.id), 403, 'permission denied');
    expectError(await list(sendOnly.key), 403, 'permission denied', /read inbound mail/);
    expectError(await create('mk_wrong', 'x@perm-a.test'), 401, 'unauthorized');
  });

  it('over gRPC: the same calls and the same errors as REST', async () => {
    const a = await createSender(stack, 'grpc routes', 'grpc-routes.test');
    const key = bearer(a.key);
    const created = ok(await rpc(clients.email, 'CreateInboundRoute', { match: 'Desk@GRPC-routes.test' }, key));
    expect(created).toEqual({
      id: expect.stringMatching(/^rt_/),
      match: 'desk@grpc-routes.test',
      created_at: expect.stringMatching(ISO),
    });
    expect(ok(await rpc(clients.email, 'ListInboundRoutes', { page: 1, page_size: 10 }, key))).toEqual({
      routes: [created],
      total: 1,
    });
    const taken = failed(await rpc(clients.email, 'CreateInboundRoute', { match: 'desk@grpc-routes.test' }, key));
    expectSameError(taken, grpc.status.ALREADY_EXISTS, (await create(a.key, 'desk@grpc-routes.test')).body as never);
    const bad = failed(await rpc(clients.email, 'CreateInboundRoute', { match: 'a+b@grpc-routes.test' }, key));
    expectSameError(bad, grpc.status.INVALID_ARGUMENT, (await create(a.key, 'a+b@grpc-routes.test')).body as never);
    expect(ok(await rpc(clients.email, 'DeleteInboundRoute', { id: created.id as string }, key))).toEqual({
      success: true,
      message: `inbound route ${created.id as string} deleted`,
    });
    const missing = failed(await rpc(clients.email, 'DeleteInboundRoute', { id: created.id as string }, key));
    expectSameError(missing, grpc.status.NOT_FOUND, (await remove(a.key, created.id as string)).body as never);
  });
});

describe("the management API's inbound routes", () => {
  it("acts on the account named, by the same rules; an unknown account is a 404; the delete takes any account's route", async () => {
    const a = await createSender(stack, 'admin routes', 'admin-routes.test');
    const made = await admin<Route>(stack, 'POST', `/accounts/${a.accountId}/inbound/routes`, {
      match: '*@Admin-Routes.test',
    });
    expect(made.body).toMatchObject({ id: expect.stringMatching(/^rt_/), match: '*@admin-routes.test' });
    // The account sees it as its own.
    expect((await list(a.key)).body.routes).toEqual([made.body]);
    const listed = await admin<Listed>(stack, 'GET', `/accounts/${a.accountId}/inbound/routes?page_size=5`);
    expect(listed.body).toEqual({ routes: [made.body], total: 1 });

    await admin(stack, 'POST', `/accounts/${a.accountId}/inbound/routes`, { match: 'x@elsewhere.test' }, 400);
    await admin(stack, 'POST', `/accounts/${a.accountId}/inbound/routes`, { match: '*@admin-routes.test' }, 409);
    await admin(stack, 'POST', '/accounts/acc_nope/inbound/routes', { match: 'x@admin-routes.test' }, 404);
    await admin(stack, 'GET', '/accounts/acc_nope/inbound/routes', undefined, 404);

    const gone = await admin(stack, 'DELETE', `/inbound/routes/${made.body.id}`);
    expect(gone.body).toEqual({ success: true, message: `inbound route ${made.body.id} deleted` });
    await admin(stack, 'DELETE', `/inbound/routes/${made.body.id}`, undefined, 404);
    expect((await list(a.key)).body.total).toBe(0);

    const grpcMade = ok(
      await rpc(
        clients.admin,
        'CreateAccountInboundRoute',
        { account_id: a.accountId, match: 'g@admin-routes.test' },
        bearer(ADMIN_TOKEN),
      ),
    );
    expect(grpcMade.match).toBe('g@admin-routes.test');
    const unknown = failed(
      await rpc(clients.admin, 'ListAccountInboundRoutes', { account_id: 'acc_nope' }, bearer(ADMIN_TOKEN)),
    );
    expect(grpc.status[unknown.code]).toBe('NOT_FOUND');
  });
});

describe("a routed domain's inbound MX record", () => {
  const domainsOf = async (accountId: string) =>
    (await admin<{ domains: Domain[] }>(stack, 'GET', `/accounts/${accountId}/domains`)).body.domains;
  const inbound = (d: Domain) => d.dns_records.filter((r) => r.purpose === 'inbound');

  it('is listed for each domain routes are on (a subdomain its own), checked by verify, and not needed to be verified', async () => {
    const accountId = await createAccount(stack, 'mx routes');
    const added = (await admin<Domain>(stack, 'POST', `/accounts/${accountId}/domains`, { name: 'mx-routes.test' }))
      .body;
    // Verified by its records, as an owner does it.
    for (const r of added.dns_records)
      if (r.type === 'MX') {
        const [priority, exchange] = r.value.split(' ');
        zone.set(r.name, 'MX', [{ exchange: exchange!, priority: Number(priority) }]);
      } else zone.set(r.name, 'TXT', [r.value]);
    const verified = (await admin<Domain>(stack, 'POST', `/domains/${added.id}/verify`, {})).body;
    expect(verified.verified).toBe(true);
    expect(inbound(verified)).toEqual([]);

    const { key } = await createKey(stack, accountId, 'all');
    expect((await create(key, 'help@mx-routes.test')).status).toBe(200);
    expect((await create(key, '*@in.mx-routes.test')).status).toBe(200);
    expect((await create(key, 'desk@in.mx-routes.test')).status).toBe(200);
    const [listed] = await domainsOf(accountId);
    expect(inbound(listed!)).toEqual([
      {
        type: 'MX',
        name: 'in.mx-routes.test',
        value: `10 ${HOSTNAME}`,
        zone_value: `10 ${HOSTNAME}`,
        purpose: 'inbound',
        status: 'pending',
      },
      {
        type: 'MX',
        name: 'mx-routes.test',
        value: `10 ${HOSTNAME}`,
        zone_value: `10 ${HOSTNAME}`,
        purpose: 'inbound',
        status: 'pending',
      },
    ]);

    // One published right, the other pointing elsewhere: each checked as found; the domain stays verified, unflagged.
    zone.set('in.mx-routes.test', 'MX', [{ exchange: `${HOSTNAME}.`, priority: 5 }]);
    zone.set('mx-routes.test', 'MX', [{ exchange: 'aspmx.l.google.com', priority: 1 }]);
    const checked = (await admin<Domain>(stack, 'POST', `/domains/${added.id}/verify`, {})).body;
    expect(inbound(checked).map((r) => [r.name, r.status])).toEqual([
      ['in.mx-routes.test', 'verified'],
      ['mx-routes.test', 'failed'],
    ]);
    expect(checked).toMatchObject({ verified: true, dns_failing_since: '' });
  });

  it('goes away with the last route on its domain', async () => {
    const a = await createSender(stack, 'mx gone', 'mx-gone.test');
    const route = (await create(a.key, 'only@mx-gone.test')).body;
    expect(inbound((await domainsOf(a.accountId))[0]!).map((r) => r.name)).toEqual(['mx-gone.test']);
    await remove(a.key, route.id);
    expect(inbound((await domainsOf(a.accountId))[0]!)).toEqual([]);
  });
});

describe('resolve, what the inbound listener asks of each RCPT TO', () => {
  let sql: postgres.Sql;
  let routes: InboundRoutesService;
  beforeAll(async () => {
    sql = postgres(stack.databaseUrl, { max: 2, onnotice: () => {} });
    const box = createKeyBox((await loadEncryptionKey(undefined, stack.dataDir)).key);
    const repos = createRepos(sql as never, box);
    routes = createInboundRoutesService({
      routes: repos.inboundRoutes,
      domains: repos.domains,
      accounts: repos.accounts,
    });
  });
  afterAll(async () => sql?.end());

  it('+hash to the local route, exact before wildcard, without regard to case; anything else undefined', async () => {
    const a = await createSender(stack, 'resolve', 'resolve.test');
    const support = (await create(a.key, 'support@resolve.test')).body;
    const any = (await create(a.key, '*@resolve.test')).body;
    const sub = (await create(a.key, '*@in.resolve.test')).body;
    const found = async (address: string) => {
      const r = await routes.resolve(address);
      return r && { id: r.route.id, accountId: r.route.accountId, mailboxHash: r.mailboxHash };
    };
    expect(await found('support@resolve.test')).toEqual({ id: support.id, accountId: a.accountId, mailboxHash: '' });
    expect(await found('SUPPORT+Ticket-42@Resolve.TEST')).toEqual({
      id: support.id,
      accountId: a.accountId,
      mailboxHash: 'Ticket-42',
    });
    expect(await found('sales@resolve.test')).toMatchObject({ id: any.id, mailboxHash: '' });
    expect(await found('sales+q3@resolve.test')).toMatchObject({ id: any.id, mailboxHash: 'q3' });
    expect(await found('x+y@IN.resolve.test')).toMatchObject({ id: sub.id, mailboxHash: 'y' });
    // A subdomain's route is its own: another subdomain, or the parent's wildcard, takes nothing for it.
    expect(await found('x@other.in.resolve.test')).toBeUndefined();
    expect(await found('x@unrouted.test')).toBeUndefined();
    for (const bad of [
      '',
      'support',
      'support@',
      '"support"@resolve.test',
      `${'a'.repeat(64)}@${'b'.repeat(252)}.test`,
    ])
      expect(await found(bad), bad).toBeUndefined();

    // Without the wildcard, only the exact route takes mail.
    await remove(a.key, any.id);
    expect(await found('sales@resolve.test')).toBeUndefined();
    expect(await found('support+x@resolve.test')).toMatchObject({ id: support.id, mailboxHash: 'x' });
  });
});
