import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { bearer, expectSameError, failed, ok, rpc, useGrpcClients, type Obj } from '../helpers/grpc-client.js';
import { call, eventually } from '../helpers/http.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * Templates over gRPC with a client that shares nothing with the server (grpc-js, the .proto files loaded at run
 * time): the same use cases as REST, the same answers and errors.
 */
const stack = useStack();
const clients = useGrpcClients(stack);

/** A google.protobuf.Struct as a client writes it in the message form: `{fields: {name: {stringValue}}}`. */
const struct = (values: Record<string, string>): Obj => ({
  fields: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, { stringValue: v }])),
});

describe('templates over gRPC', () => {
  it('creates, edits, publishes and renders; a SendEmail naming it stores the rendered email with its template', async () => {
    const key = bearer(stack.apiKey);
    const created = ok(
      await rpc(
        clients.email,
        'CreateTemplate',
        {
          name: 'gRPC welcome',
          alias: 'grpc-welcome',
          subject: 'Hi {{name}}',
          text: 'Dear {{name}}, {{greeting}}',
          variables: [{ name: 'greeting', default: { stringValue: 'welcome' } }],
          localizations: { fr: { subject: 'Salut {{name}}' } },
        },
        key,
      ),
    );
    expect(created).toMatchObject({ alias: 'grpc-welcome', version: 1, published_version: 1 });
    const id = created.id as string;
    // REST answers the same template.
    const viaRest = await call('GET', `${stack.api}/templates/grpc-welcome`, { token: stack.apiKey });
    expect(viaRest.body).toMatchObject({
      id,
      subject: 'Hi {{name}}',
      variables: [{ name: 'greeting', default: 'welcome' }],
    });

    const edited = ok(await rpc(clients.email, 'UpdateTemplate', { id, text: 'Hello {{name}}' }, key));
    expect(edited).toMatchObject({ version: 2, published_version: 1, subject: 'Hi {{name}}' });
    ok(await rpc(clients.email, 'PublishTemplate', { id, version: 2 }, key));
    const rendered = ok(
      await rpc(clients.email, 'RenderTemplate', { id, variables: struct({ name: 'Ana' }), locale: 'fr-CA' }, key),
    );
    expect(rendered).toEqual({ subject: 'Salut Ana', html: '', text: 'Hello Ana' });

    const sent = ok(
      await rpc(
        clients.email,
        'SendEmail',
        {
          from: 'sender@example.com',
          to: ['grpc-tpl@example.net'],
          template: { id: 'grpc-welcome', variables: struct({ name: 'Bo' }) },
        },
        key,
      ),
    );
    const email = ok(await rpc(clients.email, 'GetEmail', { id: sent.id }, key));
    expect(email).toMatchObject({ subject: 'Hi Bo', text: 'Hello Bo', template: { id, version: 2, locale: '' } });
    const arrived = await eventually(async () =>
      stack.sink.messages.find((m) => m.envelopeTo.includes('grpc-tpl@example.net')),
    );
    expect(arrived.parsed.subject).toBe('Hi Bo');

    // The console's calls, with the admin token.
    const admin = bearer(ADMIN_TOKEN);
    const listed = ok(await rpc(clients.admin, 'ListAccountTemplates', { account_id: stack.accountId }, admin));
    expect((listed.templates as Obj[]).map((t) => t.id)).toContain(id);
    const preview = ok(
      await rpc(
        clients.admin,
        'PreviewAccountTemplate',
        {
          account_id: stack.accountId,
          preview: { subject: '{{a}}!', text: 't', sample_variables: struct({ a: 'x' }) },
        },
        admin,
      ),
    );
    expect(preview).toEqual({ subject: 'x!', html: '', text: 't' });
  });

  it('answers errors as REST does: a missing variable, a taken alias, a read_only key changing a template', async () => {
    const key = bearer(stack.apiKey);
    ok(
      await rpc(clients.email, 'CreateTemplate', { name: 'n', alias: 'grpc-strict', subject: '{{x}}', text: 't' }, key),
    );
    const missing = failed(
      await rpc(
        clients.email,
        'SendEmail',
        { from: 'sender@example.com', to: ['r@example.net'], template: { id: 'grpc-strict' } },
        key,
      ),
    );
    const rest = await call('POST', `${stack.api}/emails`, {
      token: stack.apiKey,
      body: { from: 'sender@example.com', to: ['r@example.net'], template: { id: 'grpc-strict' } },
    });
    expectSameError(missing, grpc.status.INVALID_ARGUMENT, rest.body as { error: string; message: string });
    expect(missing.details).toBe('template.variables.x is required');

    const taken = failed(
      await rpc(clients.email, 'CreateTemplate', { name: 'n', alias: 'grpc-strict', subject: 's', text: 't' }, key),
    );
    expect(grpc.status[taken.code]).toBe('ALREADY_EXISTS');

    const readOnly = await call<{ key: string }>('POST', `${stack.admin}/accounts/${stack.accountId}/api-keys`, {
      token: ADMIN_TOKEN,
      body: { name: 'ro', permission: 'read_only' },
    });
    const denied = failed(
      await rpc(clients.email, 'UpdateTemplate', { id: 'grpc-strict', subject: 'x' }, bearer(readOnly.body.key)),
    );
    expect(grpc.status[denied.code]).toBe('PERMISSION_DENIED');
    ok(await rpc(clients.email, 'GetTemplate', { id: 'grpc-strict' }, bearer(readOnly.body.key)));
  });
});
