import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { bearer, failed, rpc, useGrpcClients } from '../helpers/grpc-client.js';
import { call, validEmail, type JsonResponse } from '../helpers/http.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * PostgreSQL refuses NUL in text and jsonb, and an unpaired surrogate has no UTF-8 form: such a string from
 * anywhere in a request (body, query, path; REST or gRPC) is a 400 naming the field, never a 500, and
 * nothing is stored.
 */

const stack = useStack({ MAILER_RATE_LIMIT: '10000' });
const clients = useGrpcClients(stack);

const NUL = '\u0000';
const LONE = '\ud800';

function expect400(res: JsonResponse, field: string): void {
  expect(res.status, res.text.slice(0, 300)).toBe(400);
  expect(Object.keys(res.body).sort()).toEqual(['error', 'message']);
  expect(res.body.error).toBe('validation error');
  expect(res.body.message).toContain(field);
}

const send = (body: unknown) => call('POST', `${stack.api}/emails`, { token: stack.apiKey, body });

describe('NUL and unpaired surrogates are refused at the boundary (REST)', () => {
  it.each([
    ['subject', { subject: `a${NUL}b` }, 'subject:'],
    ['text', { text: `x${NUL}` }, 'text:'],
    ['html', { html: `<p>${LONE}</p>` }, 'html:'],
    ['a tag value', { tags: { t: `v${NUL}` } }, 'tags.t:'],
    ['a tag name', { tags: { [`t${NUL}`]: 'v' } }, 'tags key:'],
    ['a header value', { headers: { 'X-A': `v${LONE}` } }, 'headers'],
    ['a to entry', { to: ['ok@example.net', `a${NUL}@example.net`] }, 'to[1]:'],
    [
      'an attachment filename',
      { attachments: [{ filename: `a${NUL}.txt`, content: 'aGk=' }] },
      'attachments[0].filename:',
    ],
  ])('%s', async (_what, fields, field) => {
    const before = (await call('GET', `${stack.api}/emails`, { token: stack.apiKey })).body.total;
    expect400(await send(validEmail(fields)), field);
    expect((await call('GET', `${stack.api}/emails`, { token: stack.apiKey })).body.total).toBe(before);
  });

  it('inside a batch item, named with its index', async () => {
    const res = await call('POST', `${stack.api}/emails/batch`, {
      token: stack.apiKey,
      body: { emails: [validEmail(), validEmail({ subject: `s${NUL}` })] },
    });
    expect400(res, 'emails[1].subject:');
  });

  it('in a query parameter and in a path', async () => {
    expect400(await call('GET', `${stack.api}/emails?job_id=a%00b`, { token: stack.apiKey }), 'job_id:');
    expect400(await call('GET', `${stack.api}/emails/em_%00x`, { token: stack.apiKey }), 'id:');
  });

  it('in management fields', async () => {
    const adminCall = (method: string, path: string, body?: unknown) =>
      call(method, `${stack.admin}${path}`, { token: ADMIN_TOKEN, body });
    expect400(await adminCall('POST', '/accounts', { name: `acme${NUL}` }), 'name:');
    expect400(await adminCall('POST', `/accounts/${stack.accountId}/domains`, { name: `x${NUL}.example` }), 'name:');
    expect400(
      await adminCall('POST', `/accounts/${stack.accountId}/api-keys`, {
        name: 'k',
        permission: 'all',
        allowed_domains: [`a${LONE}.example`],
      }),
      'allowed_domains',
    );
    expect400(await adminCall('GET', `/accounts/acc_%00`), 'id:');
    const accounts = await adminCall('GET', '/accounts');
    expect((accounts.body.accounts as { name: string }[]).some((a) => a.name.startsWith('acme'))).toBe(false);
  });
});

describe('the same over gRPC', () => {
  it('SendEmail with a NUL in the subject is INVALID_ARGUMENT naming the field', async () => {
    const err = failed(
      await rpc(
        clients.email,
        'SendEmail',
        { from: 'Sender <sender@example.com>', to: ['r@example.net'], subject: `a${NUL}`, text: 'x' },
        bearer(stack.apiKey),
      ),
    );
    expect(grpc.status[err.code]).toBe('INVALID_ARGUMENT');
    expect(err.details).toContain('subject:');
    expect(err.metadata.get('mail-error')).toEqual(['validation error']);
  });

  it('a header map value and a management field', async () => {
    const send = failed(
      await rpc(
        clients.email,
        'SendEmail',
        {
          from: 'Sender <sender@example.com>',
          to: ['r@example.net'],
          subject: 's',
          text: 'x',
          headers: { 'X-A': `v${NUL}` },
        },
        bearer(stack.apiKey),
      ),
    );
    expect(send.details).toContain('headers.X-A:');
    const created = failed(await rpc(clients.admin, 'CreateAccount', { name: `n${NUL}` }, bearer(ADMIN_TOKEN)));
    expect(grpc.status[created.code]).toBe('INVALID_ARGUMENT');
    expect(created.details).toContain('name:');
  });
});
