import { execFile } from 'node:child_process';
import { createFileRegistry, create, fromBinary } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema, FileDescriptorSetSchema, type FileDescriptorProto } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import {
  ServerReflection,
  ServerReflectionRequestSchema,
  type ServerReflectionRequest,
  type ServerReflectionResponse,
} from '../../src/gen/grpc/reflection/v1/reflection_pb.js';
import * as v1alpha from '../../src/gen/grpc/reflection/v1alpha/reflection_pb.js';
import { REFLECTION_MAX_REQUESTS, REFLECTION_READ_MAX_BYTES } from '../../src/rpc/reflection.js';
import { goTool } from '../helpers/go-tools.js';
import { call } from '../helpers/http.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * gRPC server reflection as a client that has no proto file meets it: the real grpcurl (pinned in go-tools.ts)
 * lists, describes and calls the live service, the key in a -H header as users pass it. What grpcurl cannot ask
 * for (a file by name, the bounds of a stream) goes over connect-node's gRPC transport.
 */

const stack = useStack();
let grpcurl: string;
beforeAll(() => {
  grpcurl = goTool('grpcurl');
}, 900_000);

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `grpcurl -plaintext <flags> <the stack's gRPC address> <verb...>`, asynchronously: the service answers from
 * this very process.
 */
function run(flags: string[], ...verb: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      grpcurl,
      ['-plaintext', '-max-time', '20', ...flags, stack.grpcAddress, ...verb],
      { timeout: 30_000 },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const ok = (r: Run) => {
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r.stdout;
};

/** One reflection stream carrying `requests`, its answers read until it ends (or fails). */
async function reflect(requests: ServerReflectionRequest[]): Promise<ServerReflectionResponse[]> {
  const client = createClient(ServerReflection, createGrpcTransport({ baseUrl: `http://${stack.grpcAddress}` }));
  const answers: ServerReflectionResponse[] = [];
  async function* send() {
    yield* requests;
  }
  for await (const a of client.serverReflectionInfo(send())) answers.push(a);
  return answers;
}
/** Files in an order where each comes after its imports, as a FileDescriptorSet is read. */
function importsFirst(files: FileDescriptorProto[]): FileDescriptorProto[] {
  const byName = new Map(files.map((f) => [f.name, f]));
  const out: FileDescriptorProto[] = [];
  const visit = (f: FileDescriptorProto | undefined) => {
    if (!f || out.includes(f)) return;
    f.dependency.forEach((d) => visit(byName.get(d)));
    out.push(f);
  };
  files.forEach(visit);
  return out;
}

const req = (messageRequest: ServerReflectionRequest['messageRequest']) =>
  create(ServerReflectionRequestSchema, { messageRequest });

describe('gRPC server reflection, driven by grpcurl', () => {
  it('lists the public and admin services, and reflection itself', async () => {
    expect(
      ok(await run([], 'list'))
        .trim()
        .split('\n'),
    ).toEqual([
      'grpc.reflection.v1.ServerReflection',
      'grpc.reflection.v1alpha.ServerReflection',
      'mail.v1.AdminService',
      'mail.v1.EmailService',
    ]);
  });

  it('describes services, methods and messages, imports included (google.protobuf.Struct)', async () => {
    const service = ok(await run([], 'describe', 'mail.v1.EmailService'));
    expect(service).toContain('mail.v1.EmailService is a service:');
    expect(service).toContain('rpc SendEmail ( .mail.v1.SendEmailRequest ) returns ( .mail.v1.SendEmailResponse );');
    expect(service).toContain(
      'rpc GetInboundRaw ( .mail.v1.GetInboundRawRequest ) returns ( stream .mail.v1.InboundContentChunk );',
    );
    expect(ok(await run([], 'describe', 'mail.v1.EmailService.SendEmail'))).toContain('is a method:');
    const message = ok(await run([], 'describe', 'mail.v1.SendEmailRequest'));
    expect(message).toContain('string from = 1;');
    expect(message).toContain('repeated string to = 2;');
    // A field whose type is in another file (google/protobuf/struct.proto), sent with the file that imports it.
    expect(ok(await run([], 'describe', 'mail.v1.MailEvent'))).toContain('.google.protobuf.Struct data = 5;');
    expect(ok(await run([], 'describe', 'google.protobuf.Struct'))).toContain('google.protobuf.Struct is a message:');
    // Everything listed, described in one go (grpcurl resolves each service on one stream).
    const all = ok(await run([], 'describe'));
    for (const s of [
      'mail.v1.EmailService',
      'mail.v1.AdminService',
      'grpc.reflection.v1.ServerReflection',
      'grpc.reflection.v1alpha.ServerReflection',
    ])
      expect(all).toContain(`${s} is a service:`);
  });

  it('sends an email from JSON with a key in a header: accepted, and the REST API and the receiving server see it', async () => {
    const body = { from: 'hello@example.com', to: ['you@example.net'], subject: 'Via grpcurl', text: 'No proto file.' };
    const sent = JSON.parse(
      ok(
        await run(
          ['-H', `authorization: Bearer ${stack.apiKey}`, '-d', JSON.stringify(body)],
          'mail.v1.EmailService/SendEmail',
        ),
      ),
    ) as { id: string; status: string };
    expect(sent).toMatchObject({ id: expect.stringMatching(/^em_/), status: 'pending' });
    const res = await call('GET', `${stack.api}/emails/${sent.id}`, { token: stack.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: sent.id, ...body });
    const [delivered] = await stack.sink.waitFor(1, 30_000);
    expect(delivered!.parsed.subject).toBe('Via grpcurl');
    // docs/clients.md's next two examples: the email's events (snake_case JSON), and an admin call.
    // (Polled: the events are recorded as the worker gets on with the email.)
    const events = await vi.waitFor(
      async () => {
        const page = JSON.parse(
          ok(
            await run(
              ['-H', `authorization: Bearer ${stack.apiKey}`, '-d', JSON.stringify({ email_id: sent.id })],
              'mail.v1.EmailService/ListEvents',
            ),
          ),
        ) as { events?: { event: string; email: { id: string } }[] };
        expect(page.events?.length).toBeGreaterThan(0);
        return page.events!;
      },
      { timeout: 30_000, interval: 250 },
    );
    expect(new Set(events.map((e) => e.email.id))).toEqual(new Set([sent.id]));
    const accounts = JSON.parse(
      ok(await run(['-H', `authorization: Bearer ${ADMIN_TOKEN}`, '-d', '{}'], 'mail.v1.AdminService/ListAccounts')),
    ) as { accounts: { id: string }[] };
    expect(accounts.accounts.map((a) => a.id)).toContain(stack.accountId);
  });

  it('a call without a key is refused UNAUTHENTICATED, though reflection needed none', async () => {
    const r = await run(['-v', '-d', '{}'], 'mail.v1.EmailService/ListEmails');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('Code: Unauthenticated');
    // The spec's error string, in the trailers -v shows (docs/clients.md says so).
    expect(r.stdout + r.stderr).toMatch(/^mail-error: unauthorized$/m);
  });

  it('an unknown symbol is an error naming it', async () => {
    const r = await run([], 'describe', 'mail.v1.NoSuchMessage');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('Symbol not found: mail.v1.NoSuchMessage');
    const call = await run(['-d', '{}'], 'mail.v1.EmailService/NoSuchMethod');
    expect(call.code).not.toBe(0);
    expect(call.stderr).toContain('NoSuchMethod');
  });

  it(`refuses a request over ${REFLECTION_READ_MAX_BYTES} bytes unread, with the spec's payload too large`, async () => {
    const r = await run([], 'describe', `mail.v1.${'X'.repeat(REFLECTION_READ_MAX_BYTES)}`);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('ResourceExhausted');
    expect(r.stderr).toContain(`exceeds the limit of ${REFLECTION_READ_MAX_BYTES} bytes`);
  });
});

describe('gRPC server reflection, what grpcurl does not ask', () => {
  it('answers a file with its imports, each file once per stream, and they make a complete registry', async () => {
    const [first, second, missing] = await reflect([
      req({ case: 'fileByFilename', value: 'mail/v1/admin_service.proto' }),
      req({ case: 'fileByFilename', value: 'mail/v1/types.proto' }),
      req({ case: 'fileByFilename', value: 'mail/v1/nope.proto' }),
    ]);
    if (first?.messageResponse.case !== 'fileDescriptorResponse') throw new Error('no file descriptors');
    const files = first.messageResponse.value.fileDescriptorProto.map((b) => fromBinary(FileDescriptorProtoSchema, b));
    expect(files[0]!.name).toBe('mail/v1/admin_service.proto');
    expect(files.map((f) => f.name)).toEqual(
      expect.arrayContaining(['mail/v1/email_service.proto', 'mail/v1/types.proto', 'google/protobuf/struct.proto']),
    );
    expect(new Set(files.map((f) => f.name)).size).toBe(files.length);
    // Self-contained: every import is among them, so a client can build every type from this answer alone.
    const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: importsFirst(files) }));
    expect(registry.getService('mail.v1.AdminService')?.methods.length).toBeGreaterThan(10);
    // Asked again on the same stream, a file comes alone (its imports were sent already).
    if (second?.messageResponse.case !== 'fileDescriptorResponse') throw new Error('no file descriptors');
    expect(second.messageResponse.value.fileDescriptorProto).toHaveLength(1);
    expect(missing?.messageResponse).toEqual({
      case: 'errorResponse',
      value: expect.objectContaining({ errorCode: Code.NotFound, errorMessage: 'file not found: mail/v1/nope.proto' }),
    });
  });

  it('answers extension numbers (none are declared) and refuses an unknown type', async () => {
    const [known, unknown] = await reflect([
      req({ case: 'allExtensionNumbersOfType', value: 'mail.v1.SendEmailRequest' }),
      req({ case: 'allExtensionNumbersOfType', value: 'mail.v1.Nope' }),
    ]);
    expect(known?.messageResponse).toEqual({
      case: 'allExtensionNumbersResponse',
      value: expect.objectContaining({ baseTypeName: 'mail.v1.SendEmailRequest', extensionNumber: [] }),
    });
    expect(unknown?.messageResponse).toEqual({
      case: 'errorResponse',
      value: expect.objectContaining({ errorCode: Code.NotFound }),
    });
  });

  it(`ends a stream after ${REFLECTION_MAX_REQUESTS} requests with RESOURCE_EXHAUSTED`, async () => {
    const list = req({ case: 'listServices', value: '' });
    const err = await reflect(Array.from({ length: REFLECTION_MAX_REQUESTS + 1 }, () => list)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.ResourceExhausted);
    expect((err as ConnectError).rawMessage).toContain(`at most ${REFLECTION_MAX_REQUESTS} requests`);
    // Exactly the cap is answered in full.
    expect(await reflect(Array.from({ length: REFLECTION_MAX_REQUESTS }, () => list))).toHaveLength(
      REFLECTION_MAX_REQUESTS,
    );
  });

  it('answers grpc.reflection.v1alpha the same, for clients that know only the older name', async () => {
    const client = createClient(
      v1alpha.ServerReflection,
      createGrpcTransport({ baseUrl: `http://${stack.grpcAddress}` }),
    );
    const ask = (messageRequest: v1alpha.ServerReflectionRequest['messageRequest']) =>
      create(v1alpha.ServerReflectionRequestSchema, { messageRequest });
    async function* send() {
      yield ask({ case: 'listServices', value: '' });
      yield ask({ case: 'fileContainingSymbol', value: 'mail.v1.EmailService.SendEmail' });
      yield ask({ case: 'fileContainingSymbol', value: 'mail.v1.Nope' });
    }
    const answers: v1alpha.ServerReflectionResponse[] = [];
    for await (const a of client.serverReflectionInfo(send())) answers.push(a);
    const [list, file, unknown] = answers;
    if (list?.messageResponse.case !== 'listServicesResponse') throw new Error('no service list');
    expect(list.messageResponse.value.service.map((s) => s.name)).toContain('mail.v1.EmailService');
    if (file?.messageResponse.case !== 'fileDescriptorResponse') throw new Error('no file descriptors');
    const first = fromBinary(FileDescriptorProtoSchema, file.messageResponse.value.fileDescriptorProto[0]!);
    expect(first.name).toBe('mail/v1/email_service.proto');
    expect(first.service.map((s) => s.name)).toContain('EmailService');
    expect(unknown?.messageResponse).toEqual({
      case: 'errorResponse',
      value: expect.objectContaining({ errorCode: Code.NotFound, errorMessage: 'symbol not found: mail.v1.Nope' }),
    });
  });

  it('is neither a REST route nor in the OpenAPI document', async () => {
    const doc = await call('GET', `${stack.api}/openapi.json`);
    expect(doc.status).toBe(200);
    expect(doc.text).not.toMatch(/reflection/i);
    const rest = await call('POST', `${stack.api}/grpc.reflection.v1.ServerReflection/ServerReflectionInfo`, {
      token: stack.apiKey,
      body: {},
    });
    expect(rest.status).toBe(404);
  });
});
