import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { admin, createAccount } from '../helpers/admin-fixtures.js';
import { bearer, failed, ok, rpc, useGrpcClients } from '../helpers/grpc-client.js';
import { call } from '../helpers/http.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * An account's suppressions through the management API (the console's suppression page): the account's own
 * search, add, import and export with the account in the path, over REST and gRPC, each account's list apart,
 * and what the account's own key sees of it.
 */
const stack = useStack();
const clients = useGrpcClients(stack);

type Suppression = {
  id: string;
  email_address: string;
  reason: string;
  scope: string;
  topic: string | null;
  email_id?: string;
  created_at: string;
};
type List = { suppressions: Suppression[]; total: number };

const csvImport = (accountId: string, csv: string, token = ADMIN_TOKEN) =>
  call<{ imported: number; skipped: number; errors: { line: number; message: string }[] }>(
    'POST',
    `${stack.admin}/accounts/${accountId}/suppressions/import`,
    { token, rawBody: csv, headers: { 'content-type': 'text/csv' } },
  );

describe('suppressions in the management API', () => {
  it('adds, searches, imports and exports an account’s suppressions, as its own key sees them', async () => {
    const accountId = await createAccount(stack, 'suppressions-admin');
    const base = `/accounts/${accountId}/suppressions`;

    const added = await admin<Suppression>(stack, 'POST', base, {
      email: 'Ann@Example.NET',
      scope: 'broadcast',
      topic: 'news',
    });
    expect(added.body).toMatchObject({
      email_address: 'ann@example.net',
      reason: 'manual',
      scope: 'broadcast',
      topic: 'news',
    });
    // Added by hand: no email to name, so no email_id at all (an empty id would read as one).
    expect(added.body).not.toHaveProperty('email_id');
    expect(added.body.id).toMatch(/^sup_/);
    // Adding it again answers the one stored.
    expect(
      (await admin<Suppression>(stack, 'POST', base, { email: 'ann@example.net', scope: 'broadcast', topic: 'news' }))
        .body.id,
    ).toBe(added.body.id);
    // The account's rules: a topic only with scope broadcast; one bare address.
    const topicWithAll = await admin(stack, 'POST', base, { email: 'x@example.net', topic: 'news' }, 400);
    expect(topicWithAll.body.message).toMatch(/topic/);
    await admin(stack, 'POST', base, { email: 'Ann <ann@example.net>' }, 400);

    const imported = await csvImport(
      accountId,
      'email,scope,topic\r\nbob@example.org,,\r\nnot an address,,\r\nann@example.net,broadcast,news\r\ncy@example.org,broadcast,\r\n',
    );
    expect(imported.status).toBe(200);
    expect(imported.body.imported).toBe(2);
    expect(imported.body.skipped).toBe(1);
    expect(imported.body.errors.map((e) => e.line)).toEqual([3]);

    const all = (await admin<List>(stack, 'GET', base)).body;
    expect(all.total).toBe(3);
    expect(all.suppressions.map((s) => s.email_address).sort()).toEqual([
      'ann@example.net',
      'bob@example.org',
      'cy@example.org',
    ]);
    const search = async (query: string) => (await admin<List>(stack, 'GET', `${base}?${query}`)).body;
    expect((await search('email=example.org')).suppressions.map((s) => s.email_address).sort()).toEqual([
      'bob@example.org',
      'cy@example.org',
    ]);
    expect((await search('scope=broadcast')).total).toBe(2);
    expect((await search('topic=news')).suppressions.map((s) => s.email_address)).toEqual(['ann@example.net']);
    expect((await search('reason=bounce')).total).toBe(0);
    await admin(stack, 'GET', `${base}?scope=some`, undefined, 400);

    const exported = await call('GET', `${stack.admin}${base}/export`, { token: ADMIN_TOKEN });
    expect(exported.status).toBe(200);
    expect(exported.headers.get('content-type')).toMatch(/^text\/csv/);
    const lines = exported.text.trim().split(/\r?\n/);
    expect(lines[0]).toBe('email,reason,scope,topic,created_at');
    // Oldest first; the two imported in one statement share a time, so their order is not asserted.
    expect(
      lines
        .slice(1)
        .map((l) => l.split(',').slice(0, 4).join(','))
        .sort(),
    ).toEqual([
      'ann@example.net,manual,broadcast,news',
      'bob@example.org,manual,all,',
      'cy@example.org,manual,broadcast,',
    ]);

    // The same list as the account's own key has it; the default account's is apart.
    const key = (
      await admin<{ key: string }>(stack, 'POST', `/accounts/${accountId}/api-keys`, { name: 'k', permission: 'all' })
    ).body.key;
    const own = await call<{ total: number }>('GET', `${stack.api}/suppressions`, { token: key });
    expect(own.body.total).toBe(3);
    expect(
      (await admin<List>(stack, 'GET', `/accounts/${stack.accountId}/suppressions?email=example.org`)).body.total,
    ).toBe(0);

    // Removed by id, as before.
    await admin(stack, 'DELETE', `/suppressions/${added.body.id}`);
    expect((await search('topic=news')).total).toBe(0);
  });

  it('answers 404 for an unknown account, 401 without the token and 415 for a body that is not CSV', async () => {
    await admin(stack, 'GET', '/accounts/acc_nope/suppressions', undefined, 404);
    await admin(stack, 'POST', '/accounts/acc_nope/suppressions', { email: 'a@example.net' }, 404);
    expect((await csvImport('acc_nope', 'email\r\na@example.net\r\n')).status).toBe(404);
    expect(
      (await call('GET', `${stack.admin}/accounts/acc_nope/suppressions/export`, { token: ADMIN_TOKEN })).status,
    ).toBe(404);

    expect((await csvImport(stack.accountId, 'email\r\na@example.net\r\n', stack.apiKey)).status).toBe(401);
    expect(
      (await call('GET', `${stack.admin}/accounts/${stack.accountId}/suppressions/export`, { token: stack.apiKey }))
        .status,
    ).toBe(401);
    const form = await call('POST', `${stack.admin}/accounts/${stack.accountId}/suppressions/import`, {
      token: ADMIN_TOKEN,
      rawBody: 'email\r\na@example.net\r\n',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(415);
    // Nothing was added to the account by the refused calls.
    expect(
      (await admin<List>(stack, 'GET', `/accounts/${stack.accountId}/suppressions?email=a@example.net`)).body.total,
    ).toBe(0);
  });

  it('serves the same calls over gRPC', async () => {
    const accountId = await createAccount(stack, 'suppressions-grpc');
    const md = bearer(ADMIN_TOKEN);
    const added = ok(
      await rpc(clients.admin, 'AddAccountSuppression', { account_id: accountId, email: 'g@example.net' }, md),
    );
    expect(added).toMatchObject({ email_address: 'g@example.net', reason: 'manual', scope: 'all' });
    const imported = ok(
      await rpc(
        clients.admin,
        'ImportAccountSuppressions',
        { account_id: accountId, csv: 'email,scope,topic\nh@example.net,broadcast,promo\nbad,,\n' },
        md,
      ),
    );
    expect(imported).toMatchObject({ imported: 1, skipped: 0, errors: [{ line: 3 }] });
    const listed = ok(await rpc(clients.admin, 'ListSuppressions', { account_id: accountId, scope: 'broadcast' }, md));
    expect(listed.total).toBe(1);
    expect(listed.suppressions).toMatchObject([{ email_address: 'h@example.net', topic: { stringValue: 'promo' } }]);
    const exported = ok(await rpc(clients.admin, 'ExportAccountSuppressions', { account_id: accountId }, md));
    expect(
      (exported.csv as string)
        .split('\r\n')
        .slice(1, 3)
        .map((l) => l.split(',')[0]),
    ).toEqual(['g@example.net', 'h@example.net']);
    // REST answers the same export.
    const rest = await call('GET', `${stack.admin}/accounts/${accountId}/suppressions/export`, { token: ADMIN_TOKEN });
    expect(rest.text).toBe(exported.csv);

    const unknown = failed(await rpc(clients.admin, 'ExportAccountSuppressions', { account_id: 'acc_nope' }, md));
    expect(unknown.code).toBe(grpc.status.NOT_FOUND);
    const noToken = failed(
      await rpc(clients.admin, 'AddAccountSuppression', { account_id: accountId, email: 'i@example.net' }, bearer('x')),
    );
    expect(noToken.code).toBe(grpc.status.UNAUTHENTICATED);
  });
});
