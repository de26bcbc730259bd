import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { EmailService as ConnectEmailService } from '../../src/gen/mail/v1/email_service_pb.js';
import { bearer, expectSameError, failed, ok, rpc, useGrpcClients, type Obj } from '../helpers/grpc-client.js';
import { call, eventually, validEmail } from '../helpers/http.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * The gRPC face of the service, through a client that shares nothing with the server: @grpc/grpc-js with
 * the .proto files loaded at run time (snake_case field names, as the spec and the contract name them).
 * Every answer and every error is compared with what the REST gateway answers for the same thing.
 */

const stack = useStack();
const clients = useGrpcClients(stack);

describe('EmailService over gRPC (grpc-js, proto loaded at run time)', () => {
  let sentId = '';

  it('SendEmail accepts and the email arrives at the receiving server, exactly as a REST send', async () => {
    const res = ok(
      await rpc(
        clients.email,
        'SendEmail',
        {
          from: 'Sender <sender@example.com>',
          to: ['grpc@example.net'],
          cc: ['cc@example.net'],
          reply_to: ['reply@example.com'],
          subject: 'Over gRPC',
          text: 'Hello from grpc-js',
          html: '<p>Hello from <i>grpc-js</i></p>',
          headers: { 'X-Campaign': 'grpc' },
          tags: { via: 'grpc' },
          attachments: [
            {
              filename: 'a.txt',
              content: Buffer.from('attached over grpc').toString('base64'),
              content_type: 'text/plain',
            },
          ],
        },
        bearer(stack.apiKey),
      ),
    );
    expect(res).toEqual({ id: expect.stringMatching(/^em_[0-9a-z]{26}$/), message_id: '', status: 'pending' });
    sentId = res.id as string;

    // A copy per recipient, as a REST send makes them.
    const copies = await stack.sink.waitFor(2);
    expect(copies.flatMap((m) => m.envelopeTo).sort()).toEqual(['cc@example.net', 'grpc@example.net']);
    const msg = copies[0];
    expect(msg!.messageId).toBe(`<${sentId}@example.com>`);
    expect(msg!.parsed.subject).toBe('Over gRPC');
    expect(msg!.parsed.text?.trim()).toBe('Hello from grpc-js');
    expect(msg!.parsed.headers.get('x-campaign')).toBe('grpc');
    expect(msg!.parsed.attachments[0]!.content.toString()).toBe('attached over grpc');
  });

  it('GetEmail answers the same email REST answers, field for field', async () => {
    const rest = await eventually(async () => {
      const r = await call('GET', `${stack.api}/emails/${sentId}`, { token: stack.apiKey });
      return r.body.status === 'delivered' ? r : undefined;
    });
    expect(rest.status).toBe(200);
    const viaGrpc = ok(await rpc(clients.email, 'GetEmail', { id: sentId }, bearer(stack.apiKey)));
    // An email sent without a template has none: proto-loader writes the unset message field as null, REST leaves it out.
    const { template, ...fields } = viaGrpc;
    expect(template).toBeNull();
    expect(rest.body.template).toBeUndefined();
    expect(fields).toEqual(rest.body);
    expect(viaGrpc).toMatchObject({
      id: sentId,
      status: 'delivered',
      message_id: `<${sentId}@example.com>`,
      job_type: 'direct',
      job_id: '',
      mal_status: 'healthy',
    });
  });

  it('ListEmails answers the same page REST answers, with the same filters', async () => {
    // A second email, through REST this time, so that the list has more than one entry.
    const second = await call('POST', `${stack.api}/emails`, {
      token: stack.apiKey,
      body: validEmail({ subject: 'Over REST' }),
    });
    expect(second.status).toBe(200);
    await stack.sink.waitFor(2);
    // Both outcomes recorded, so the two reads below see the same statuses (the sink's 250 comes first).
    await eventually(async () => {
      const listed = await call<{ data: { status: string }[] }>('GET', `${stack.api}/emails?page_size=10`, {
        token: stack.apiKey,
      });
      return listed.body.data.length === 2 && listed.body.data.every((e) => e.status === 'delivered');
    });

    const rest = await call('GET', `${stack.api}/emails?page=1&page_size=10&job_type=direct`, { token: stack.apiKey });
    expect(rest.status).toBe(200);
    const viaGrpc = ok(
      await rpc(clients.email, 'ListEmails', { page: 1, page_size: 10, job_type: 'direct' }, bearer(stack.apiKey)),
    );
    expect(viaGrpc).toEqual(rest.body);
    expect(viaGrpc.total).toBe(2);
    expect((viaGrpc.data as Obj[]).map((e) => e.id)).toContain(sentId);

    const restPage2 = await call('GET', `${stack.api}/emails?page=2&page_size=1`, { token: stack.apiKey });
    const grpcPage2 = ok(await rpc(clients.email, 'ListEmails', { page: 2, page_size: 1 }, bearer(stack.apiKey)));
    expect(grpcPage2).toEqual(restPage2.body);
    expect(grpcPage2.data).toHaveLength(1);
  });

  it('an Idempotency-Key in the metadata replays the first answer and sends nothing twice', async () => {
    const before = stack.sink.messages.length;
    const req = { from: 'sender@example.com', to: ['idem@example.net'], subject: 'Once', text: 'only once' };
    const first = ok(
      await rpc(clients.email, 'SendEmail', req, bearer(stack.apiKey, { 'idempotency-key': 'grpc-idem-1' })),
    );
    const again = ok(
      await rpc(clients.email, 'SendEmail', req, bearer(stack.apiKey, { 'idempotency-key': 'grpc-idem-1' })),
    );
    expect(again).toEqual(first);
    await stack.sink.waitFor(before + 1);
    await new Promise((r) => setTimeout(r, 500));
    expect(stack.sink.counts().get(`<${first.id as string}@example.com>`)).toBe(1);
    expect(stack.sink.messages.length).toBe(before + 1);
  });
});

describe('gRPC errors carry the REST status as a gRPC code, the same message, and the `error` text in the mail-error trailer', () => {
  it('missing, malformed and unknown keys: UNAUTHENTICATED, "Invalid or missing API key"', async () => {
    const rest = await call('GET', `${stack.api}/emails`);
    expect(rest.status).toBe(401);
    expect(rest.body).toEqual({ error: 'unauthorized', message: 'Invalid or missing API key' });

    expectSameError(
      failed(await rpc(clients.email, 'ListEmails', {}, new grpc.Metadata())),
      grpc.status.UNAUTHENTICATED,
      rest.body as { error: string; message: string },
    );
    expectSameError(
      failed(await rpc(clients.email, 'SendEmail', validEmail(), bearer('key_not-a-real-key'))),
      grpc.status.UNAUTHENTICATED,
      rest.body as { error: string; message: string },
    );
    const noPrefix = new grpc.Metadata();
    noPrefix.set('authorization', stack.apiKey);
    expectSameError(
      failed(await rpc(clients.email, 'GetEmail', { id: 'em_x' }, noPrefix)),
      grpc.status.UNAUTHENTICATED,
      rest.body as { error: string; message: string },
    );
  });

  it('a read_only key sending: PERMISSION_DENIED with the message REST gives', async () => {
    const created = await call('POST', `${stack.admin}/accounts/${stack.accountId}/api-keys`, {
      token: ADMIN_TOKEN,
      body: { name: 'reader', permission: 'read_only' },
    });
    expect(created.status).toBe(200);
    const readOnly = created.body.key as string;

    const rest = await call('POST', `${stack.api}/emails`, { token: readOnly, body: validEmail() });
    expect(rest.status).toBe(403);
    expect(rest.body.error).toBe('permission denied');
    expect(rest.body.message).toEqual(expect.any(String));
    expectSameError(
      failed(await rpc(clients.email, 'SendEmail', validEmail(), bearer(readOnly))),
      grpc.status.PERMISSION_DENIED,
      rest.body as { error: string; message: string },
    );

    // ...while reading is allowed to it over gRPC too.
    const list = ok(await rpc(clients.email, 'ListEmails', { page_size: 1 }, bearer(readOnly)));
    expect(list.total).toBeGreaterThan(0);
  });

  it('a key deleted after sends over gRPC (the process keeps their key): the next SendEmail is UNAUTHENTICATED', async () => {
    const created = await call('POST', `${stack.admin}/accounts/${stack.accountId}/api-keys`, {
      token: ADMIN_TOKEN,
      body: { name: 'short-lived', permission: 'all' },
    });
    const key = created.body.key as string;
    for (let i = 0; i < 2; i++) ok(await rpc(clients.email, 'SendEmail', validEmail(), bearer(key)));
    await call('DELETE', `${stack.admin}/api-keys/${created.body.id as string}`, { token: ADMIN_TOKEN });
    expectSameError(
      failed(await rpc(clients.email, 'SendEmail', validEmail(), bearer(key))),
      grpc.status.UNAUTHENTICATED,
      { error: 'unauthorized', message: 'Invalid or missing API key' },
    );
  });

  it('a 999-character subject: INVALID_ARGUMENT with the same validation message as REST', async () => {
    const body = validEmail({ subject: 's'.repeat(999) });
    const rest = await call('POST', `${stack.api}/emails`, { token: stack.apiKey, body });
    expect(rest.status).toBe(400);
    expect(rest.body.error).toBe('validation error');
    expect(rest.body.message).toMatch(/subject/);
    expect(rest.body.message).toMatch(/999/);
    expect(rest.body.message).toMatch(/998/);
    expectSameError(
      failed(await rpc(clients.email, 'SendEmail', body, bearer(stack.apiKey))),
      grpc.status.INVALID_ARGUMENT,
      rest.body as { error: string; message: string },
    );
  });

  it('an unknown email: NOT_FOUND, "email <id> not found"', async () => {
    const id = 'em_00000000000000000000000000';
    const rest = await call('GET', `${stack.api}/emails/${id}`, { token: stack.apiKey });
    expect(rest.status).toBe(404);
    expect(rest.body).toEqual({ error: 'not found', message: `email ${id} not found` });
    expectSameError(
      failed(await rpc(clients.email, 'GetEmail', { id }, bearer(stack.apiKey))),
      grpc.status.NOT_FOUND,
      rest.body as { error: string; message: string },
    );

    // The status message survives any text: reserved URI characters, `%`, and non-ASCII.
    const odd = 'em_ünï/cødé: 100%, a?b#c';
    const restOdd = await call('GET', `${stack.api}/emails/${encodeURIComponent(odd)}`, { token: stack.apiKey });
    expect(restOdd.status).toBe(404);
    expect(restOdd.body).toEqual({ error: 'not found', message: `email ${odd} not found` });
    expectSameError(
      failed(await rpc(clients.email, 'GetEmail', { id: odd }, bearer(stack.apiKey))),
      grpc.status.NOT_FOUND,
      restOdd.body as { error: string; message: string },
    );
  });

  it('scheduled and batch RPCs refuse as REST does: same code class, message and error, after authentication', async () => {
    const past = new Date(Date.now() - 60_000).toISOString();
    const cases: [string, Obj, string, string, number][] = [
      [
        'ScheduleEmail',
        { ...validEmail(), scheduled_at: past },
        'POST',
        '/emails/schedule',
        grpc.status.INVALID_ARGUMENT,
      ],
      ['ListScheduledEmails', { limit: 101 }, 'GET', '/emails/scheduled?limit=101', grpc.status.INVALID_ARGUMENT],
      ['GetScheduledEmail', { id: 'sch_x' }, 'GET', '/emails/scheduled/sch_x', grpc.status.NOT_FOUND],
      ['CancelScheduledEmail', { id: 'sch_x' }, 'DELETE', '/emails/scheduled/sch_x', grpc.status.NOT_FOUND],
      ['SendBatch', { emails: [] }, 'POST', '/emails/batch', grpc.status.INVALID_ARGUMENT],
      ['ListBatchJobs', { status: 'done' }, 'GET', '/emails/batch?status=done', grpc.status.INVALID_ARGUMENT],
      ['GetBatchJob', { id: 'bat_x' }, 'GET', '/emails/batch/bat_x', grpc.status.NOT_FOUND],
    ];
    for (const [method, req, httpMethod, route, code] of cases) {
      const restBody = httpMethod === 'POST' ? req : undefined;
      const rest = await call(httpMethod, `${stack.api}${route}`, { token: stack.apiKey, body: restBody });
      expect(rest.status, `${httpMethod} ${route}`).toBeGreaterThanOrEqual(400);
      expectSameError(
        failed(await rpc(clients.email, method, req, bearer(stack.apiKey))),
        code,
        rest.body as { error: string; message: string },
      );
      // Authentication comes first, as over REST.
      expect(failed(await rpc(clients.email, method, req, new grpc.Metadata())).code).toBe(grpc.status.UNAUTHENTICATED);
    }
  });
});

describe('AdminService over gRPC with the admin token, and the daily quota', () => {
  it('GetEmailDetail answers the same timeline as REST; its event data is a google.protobuf.Struct on the wire', async () => {
    const sent = await call<{ id: string }>('POST', `${stack.api}/emails`, {
      token: stack.apiKey,
      body: validEmail({ subject: 'timeline over grpc' }),
    });
    const rest = await eventually(async () => {
      const r = await call<{ events: { type: string; data: Obj }[] }>('GET', `${stack.admin}/emails/${sent.body.id}`, {
        token: ADMIN_TOKEN,
      });
      return r.body.events.length === 2 ? r.body : undefined;
    });
    const viaGrpc = ok(await rpc(clients.admin, 'GetEmailDetail', { id: sent.body.id }, bearer(ADMIN_TOKEN)));
    const events = viaGrpc.events as {
      id: string;
      type: string;
      data: { fields: Record<string, { numberValue?: number; stringValue?: string }> };
    }[];
    expect(events.map((e) => e.type)).toEqual(rest.events.map((e) => e.type));
    const delivery = events.find((e) => e.type === 'delivery')!;
    const restDelivery = rest.events.find((e) => e.type === 'delivery')!;
    expect(delivery.data.fields.smtp_response!.stringValue).toBe(restDelivery.data.smtp_response);
    expect(delivery.data.fields.processing_time_millis!.numberValue).toBe(restDelivery.data.processing_time_millis);
    expect(failed(await rpc(clients.admin, 'GetEmailDetail', { id: 'em_unknown' }, bearer(ADMIN_TOKEN))).code).toBe(
      grpc.status.NOT_FOUND,
    );
  });

  it('a wrong admin token is UNAUTHENTICATED, as the REST management API answers 401', async () => {
    const rest = await call('GET', `${stack.admin}/accounts`, { token: 'adm_wrong' });
    expect(rest.status).toBe(401);
    expectSameError(
      failed(await rpc(clients.admin, 'ListAccounts', {}, bearer('adm_wrong'))),
      grpc.status.UNAUTHENTICATED,
      rest.body as { error: string; message: string },
    );
    // An API key is not the admin token.
    expect(failed(await rpc(clients.admin, 'ListAccounts', {}, bearer(stack.apiKey))).code).toBe(
      grpc.status.UNAUTHENTICATED,
    );
  });

  it('creates an account, a verified domain and a key over gRPC; REST sees them and the key sends; the quota is RESOURCE_EXHAUSTED with the quota text', async () => {
    const account = ok(await rpc(clients.admin, 'CreateAccount', { name: 'Made over gRPC' }, bearer(ADMIN_TOKEN)));
    expect(account).toMatchObject({
      id: expect.stringMatching(/^acc_/),
      name: 'Made over gRPC',
      status: 'healthy',
      daily_quota: 100,
      created_at: expect.any(String),
    });
    const accountId = account.id as string;

    const restAccount = await call('GET', `${stack.admin}/accounts/${accountId}`, { token: ADMIN_TOKEN });
    expect(restAccount.status).toBe(200);
    expect(restAccount.body).toMatchObject({
      id: accountId,
      name: 'Made over gRPC',
      status: 'healthy',
      daily_quota: 100,
      created_at: account.created_at,
    });
    const grpcAccount = ok(await rpc(clients.admin, 'GetAccount', { id: accountId }, bearer(ADMIN_TOKEN)));
    expect(grpcAccount).toMatchObject(restAccount.body);

    const domain = ok(
      await rpc(clients.admin, 'CreateDomain', { account_id: accountId, name: 'grpc-quota.test' }, bearer(ADMIN_TOKEN)),
    );
    expect(domain).toMatchObject({ id: expect.stringMatching(/^dom_/), name: 'grpc-quota.test', verified: false });
    expect(domain.dns_records).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'TXT', name: '_mailer.grpc-quota.test' })]),
    );
    // zone_value over gRPC too: the DKIM value, over 255 characters, as two quoted strings joined by a space.
    const dkim = (domain.dns_records as { purpose: string; value: string; zone_value: string }[]).find(
      (r) => r.purpose === 'dkim',
    )!;
    expect(dkim.zone_value).toBe(`"${dkim.value.slice(0, 255)}" "${dkim.value.slice(255)}"`);
    const verified = ok(await rpc(clients.admin, 'VerifyDomain', { id: domain.id, force: true }, bearer(ADMIN_TOKEN)));
    expect(verified.verified).toBe(true);

    const key = ok(
      await rpc(
        clients.admin,
        'CreateApiKey',
        { account_id: accountId, name: 'grpc key', permission: 'all' },
        bearer(ADMIN_TOKEN),
      ),
    );
    expect(key).toMatchObject({
      id: expect.stringMatching(/^key_/),
      name: 'grpc key',
      permission: 'all',
      allowed_domains: [],
    });
    expect(key.key).toEqual(expect.any(String));
    const restKeys = await call('GET', `${stack.admin}/accounts/${accountId}/api-keys`, { token: ADMIN_TOKEN });
    expect((restKeys.body.api_keys as Obj[]).map((k) => k.id)).toEqual([key.id]);
    expect(JSON.stringify(restKeys.body)).not.toContain(key.key as string);

    const updated = ok(
      await rpc(clients.admin, 'UpdateAccount', { id: accountId, daily_quota: 1 }, bearer(ADMIN_TOKEN)),
    );
    expect(updated.daily_quota).toBe(1);

    const apiKey = key.key as string;
    const first = ok(
      await rpc(
        clients.email,
        'SendEmail',
        { from: 'ops@grpc-quota.test', to: ['q@example.net'], subject: 'within quota', text: 'x' },
        bearer(apiKey),
      ),
    );
    expect(first.status).toBe('pending');

    const rest = await call('POST', `${stack.api}/emails`, {
      token: apiKey,
      body: validEmail({ from: 'ops@grpc-quota.test' }),
    });
    expect(rest.status).toBe(429);
    expect(Object.keys(rest.body)).toEqual(['error']);
    expect(rest.body.error).toMatch(/^daily quota exceeded \(1\/1\), resets at \d{4}-\d\d-\d\dT00:00:00\.000Z$/);
    const err = failed(
      await rpc(
        clients.email,
        'SendEmail',
        { from: 'ops@grpc-quota.test', to: ['q@example.net'], subject: 'over quota', text: 'x' },
        bearer(apiKey),
      ),
    );
    expectSameError(err, grpc.status.RESOURCE_EXHAUSTED, rest.body as { error: string });

    // Reads stay available over the quota.
    const list = ok(await rpc(clients.email, 'ListEmails', {}, bearer(apiKey)));
    expect(list.total).toBe(1);
    await eventually(async () => stack.sink.counts().get(`<${first.id as string}@grpc-quota.test>`) === 1);
  });
});

describe('the Connect protocol on the same listener', () => {
  it('a connect-node client (HTTP/2, generated descriptors) reads an email and gets errors as ConnectError with the same text', async () => {
    const transport = createConnectTransport({ baseUrl: `http://${stack.grpcAddress}`, httpVersion: '2' });
    const client = createClient(ConnectEmailService, transport);
    const headers = { authorization: `Bearer ${stack.apiKey}` };

    const list = await client.listEmails({ pageSize: 100, jobType: 'direct' }, { headers });
    expect(list.total).toBeGreaterThan(0);
    const id = list.data[0]!.id;
    const viaConnect = await client.getEmail({ id }, { headers });
    const rest = await call('GET', `${stack.api}/emails/${id}`, { token: stack.apiKey });
    expect(viaConnect.id).toBe(rest.body.id);
    expect(viaConnect.subject).toBe(rest.body.subject);
    expect(viaConnect.status).toBe(rest.body.status);
    expect(viaConnect.messageId).toBe(rest.body.message_id);
    expect(viaConnect.createdAt).toBe(rest.body.created_at);
    expect(viaConnect.to).toEqual(rest.body.to);

    const missing = await client.getEmail({ id: 'em_00000000000000000000000000' }, { headers }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(missing).toBeInstanceOf(ConnectError);
    const ce = missing as ConnectError;
    expect(ce.code).toBe(Code.NotFound);
    expect(ce.rawMessage).toBe('email em_00000000000000000000000000 not found');
    expect(ce.metadata.get('mail-error')).toBe('not found');

    const unauth = await client.listEmails({}).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(unauth).toBeInstanceOf(ConnectError);
    expect((unauth as ConnectError).code).toBe(Code.Unauthenticated);
    expect((unauth as ConnectError).rawMessage).toBe('Invalid or missing API key');
  });
});

describe('shutdown', () => {
  it('stops promptly while gRPC and Connect clients still hold idle HTTP/2 connections', async () => {
    // Both kinds of client leave their connection open after a call, as long-lived gRPC clients do.
    const transport = createConnectTransport({ baseUrl: `http://${stack.grpcAddress}`, httpVersion: '2' });
    await createClient(ConnectEmailService, transport).listEmails(
      {},
      { headers: { authorization: `Bearer ${stack.apiKey}` } },
    );
    ok(await rpc(clients.email, 'ListEmails', {}, bearer(stack.apiKey)));

    const started = Date.now();
    await stack.stop();
    // Fastify's HTTP/2 session timeout is 72 s: a stop that waited for idle sessions would take that long.
    expect(Date.now() - started).toBeLessThan(10_000);
  }, 90_000);
});
