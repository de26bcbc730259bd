import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { afterAll, beforeAll, expect } from 'vitest';

/**
 * A gRPC client that shares nothing with the server: @grpc/grpc-js with the .proto files loaded at run
 * time (snake_case field names, as the spec and the contract name them).
 */

const PROTO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../proto');

export type Obj = Record<string, unknown>;
type UnaryMethod = (
  req: Obj,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  cb: (err: grpc.ServiceError | null, res?: Obj) => void,
) => grpc.ClientUnaryCall;
export type GrpcClient = grpc.Client & Record<string, UnaryMethod>;
export type GrpcResult = { ok: true; value: Obj } | { ok: false; error: grpc.ServiceError };

export function loadClients(address: string): { email: GrpcClient; admin: GrpcClient } {
  const definition = protoLoader.loadSync(['mail/v1/email_service.proto', 'mail/v1/admin_service.proto'], {
    includeDirs: [PROTO_ROOT],
    keepCase: true,
    defaults: true,
    arrays: true,
    objects: true,
    // any bytes fields as base64 strings, as the JSON gateway carries them
    bytes: String,
  });
  const root = grpc.loadPackageDefinition(definition) as unknown as {
    mail: { v1: { EmailService: grpc.ServiceClientConstructor; AdminService: grpc.ServiceClientConstructor } };
  };
  const creds = grpc.credentials.createInsecure();
  return {
    email: new root.mail.v1.EmailService(address, creds) as unknown as GrpcClient,
    admin: new root.mail.v1.AdminService(address, creds) as unknown as GrpcClient,
  };
}

export function bearer(token: string | undefined, extra: Record<string, string> = {}): grpc.Metadata {
  const md = new grpc.Metadata();
  if (token !== undefined) md.set('authorization', `Bearer ${token}`);
  for (const [k, v] of Object.entries(extra)) md.set(k, v);
  return md;
}

export function rpc(client: GrpcClient, method: string, req: Obj, metadata: grpc.Metadata): Promise<GrpcResult> {
  const fn = client[method];
  if (typeof fn !== 'function') throw new Error(`no method ${method} on the loaded service`);
  return new Promise((resolve) => {
    fn.call(client, req, metadata, { deadline: Date.now() + 15_000 }, (err, res) => {
      resolve(err ? { ok: false, error: err } : { ok: true, value: res ?? {} });
    });
  });
}

export function ok(r: GrpcResult): Obj {
  if (!r.ok) throw new Error(`expected success, got ${grpc.status[r.error.code]}: ${r.error.details}`);
  return r.value;
}

export function failed(r: GrpcResult): grpc.ServiceError {
  if (r.ok) throw new Error(`expected an error, got ${JSON.stringify(r.value)}`);
  return r.error;
}

/** The gRPC error carries REST's error body: status message = `message` (else `error`), trailer `mail-error` = `error`. */
export function expectSameError(
  err: grpc.ServiceError,
  code: grpc.status,
  rest: { error: string; message?: string },
): void {
  expect(grpc.status[err.code]).toBe(grpc.status[code]);
  expect(err.details).toBe(rest.message ?? rest.error);
  expect(err.metadata.get('mail-error')).toEqual([rest.error]);
}

/** gRPC clients of both services for the tests of a file, opened once the stack runs and closed after them. */
export function useGrpcClients(stack: { grpcAddress: string }): { email: GrpcClient; admin: GrpcClient } {
  const clients = {} as { email: GrpcClient; admin: GrpcClient };
  beforeAll(() => {
    Object.assign(clients, loadClients(stack.grpcAddress));
  });
  afterAll(() => {
    clients.email?.close();
    clients.admin?.close();
  });
  return clients;
}
