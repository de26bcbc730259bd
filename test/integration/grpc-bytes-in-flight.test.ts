import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport, createGrpcTransport } from '@connectrpc/connect-node';
import { describe, expect, it, onTestFinished } from 'vitest';
import { callCredential, type CallContext } from '../../src/api/call-context.js';
import { BytesInFlight, type BytesInFlightLimits } from '../../src/bytes-in-flight.js';
import { AppError } from '../../src/errors.js';
import { AdminService } from '../../src/gen/mail/v1/admin_service_pb.js';
import { EmailService } from '../../src/gen/mail/v1/email_service_pb.js';
import { createLogger } from '../../src/logger.js';
import { createMetrics } from '../../src/metrics.js';
import { buildGrpcApp } from '../../src/rpc/grpc-app.js';
import type { Principal } from '../../src/services/auth-service.js';
import { createFakeEmailApi, SENT_ID } from '../helpers/fake-api-deps.js';
import { envelope, grpcStatus, pushBody, type H2Answer } from '../helpers/h2-push.js';
import { eventually } from '../helpers/http.js';

/**
 * The gRPC listener counts each call's message in the process's bytes in flight as connect-es reads it (a
 * Connect unary call's declared Content-Length at once, in its request gate), for gRPC, gRPC-Web and Connect:
 * over a cap the call is RESOURCE_EXHAUSTED with `too many requests` and `retry-after`, as REST's 429; within
 * it a call is answered as before; and the bytes of every call come back when it ends, an aborted one included.
 * Bytes already in flight are held here by meters of the test's own, standing for other calls.
 */

const MiB = 1024 * 1024;
const logger = createLogger('silent', 'test');

async function admitAnyKey(ctx: CallContext): Promise<Principal> {
  const key = callCredential(ctx);
  if (key === undefined || !key.startsWith('mk_')) throw new AppError('unauthorized', 'Invalid or missing API key');
  ctx.principal = {
    keyId: key,
    accountId: 'acc_1',
    permission: 'all',
    allowedDomains: [],
    accountStatus: 'healthy',
    dailyQuota: 100,
  };
  return ctx.principal;
}
const refuseAdmin = async (): Promise<never> => {
  throw new AppError('unauthorized', 'Invalid or missing admin token');
};

async function startGrpc(limits: BytesInFlightLimits): Promise<{ address: string; bytes: BytesInFlight }> {
  const bytes = new BytesInFlight(limits);
  const fake = createFakeEmailApi();
  const app = await buildGrpcApp({
    emailApi: fake.emailApi as never,
    adminApi: Object.fromEntries(AdminService.methods.map((m) => [m.localName, refuseAdmin])),
    admitApi: admitAnyKey,
    admitAdmin: refuseAdmin,
    logger,
    metrics: createMetrics(),
    bytesInFlight: bytes,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  onTestFinished(() => app.close());
  return { address: `127.0.0.1:${(app.server.address() as AddressInfo).port}`, bytes };
}

type Protocol = 'grpc' | 'grpc-web' | 'connect';
const PROTOCOLS: Protocol[] = ['grpc', 'grpc-web', 'connect'];

function headersFor(protocol: Protocol, key: string, total: number): Record<string, string> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (protocol === 'connect')
    return {
      ...headers,
      'content-type': 'application/proto',
      'connect-protocol-version': '1',
      'content-length': String(total),
    };
  return {
    ...headers,
    'content-type': protocol === 'grpc' ? 'application/grpc' : 'application/grpc-web+proto',
    ...(protocol === 'grpc' ? { te: 'trailers' } : {}),
  };
}

/** A SendBatch message of `total` bytes (zeros after the envelope) in the given protocol. */
function push(address: string, protocol: Protocol, key: string, total: number): Promise<H2Answer> {
  const prefix = protocol === 'connect' ? Buffer.alloc(0) : envelope(Buffer.alloc(0), { declaredLength: total - 5 });
  return pushBody(address, '/mail.v1.EmailService/SendBatch', headersFor(protocol, key, total), { prefix, total });
}

function errorOf(
  protocol: Protocol,
  answer: H2Answer,
): { code: string; message: string; mailError: unknown; retryAfter: unknown } {
  if (protocol === 'connect') {
    const body = JSON.parse(answer.body.toString('utf8')) as { code: string; message: string };
    return {
      code: body.code,
      message: body.message,
      mailError: answer.headers['mail-error'],
      retryAfter: answer.headers['retry-after'],
    };
  }
  const s = grpcStatus(answer);
  return {
    code: grpc.status[s.code]!.toLowerCase(),
    message: s.message,
    mailError: s.metadata['mail-error'],
    retryAfter: s.metadata['retry-after'],
  };
}

describe('gRPC request messages in flight', () => {
  for (const protocol of PROTOCOLS) {
    it(`${protocol}: a message over its key's cap, then over the process's, is RESOURCE_EXHAUSTED with retry-after; the bytes come back`, async () => {
      const { address, bytes } = await startGrpc({ process: 128 * MiB, perKey: 64 * MiB });
      const other = bytes.meter('mk_a');
      other.allocate(60 * MiB);

      const overKey = await push(address, protocol, 'mk_a', 12 * MiB);
      expect(errorOf(protocol, overKey)).toEqual({
        code: 'resource_exhausted',
        mailError: 'too many requests',
        retryAfter: '1',
        message:
          'This API key already has 64 MiB of request bodies in flight (the most it may); retry once earlier requests are answered',
      });
      // A declared length is refused before a byte is read; a gRPC stream at the chunk that overflows.
      expect(overKey.finishedWhenAnswered).toBe(false);
      expect(overKey.sentWhenAnswered).toBeLessThan(protocol === 'connect' ? 4 * MiB : 12 * MiB);
      await eventually(async () => (bytes.held() === 60 * MiB ? true : undefined));

      const third = bytes.meter('mk_b');
      third.allocate(60 * MiB);
      const overProcess = await push(address, protocol, 'mk_c', 12 * MiB);
      expect(errorOf(protocol, overProcess)).toMatchObject({
        code: 'resource_exhausted',
        mailError: 'too many requests',
        retryAfter: '1',
        message: 'The server already holds 128 MiB of request bodies in flight (the most it takes); retry shortly',
      });
      await eventually(async () => (bytes.held() === 120 * MiB ? true : undefined));
      other.release();
      third.release();
      expect(bytes.held()).toBe(0);

      // Within the caps the same message is read whole and answered by the handler's rules (zeros are no SendBatchRequest).
      const read = await push(address, protocol, 'mk_a', 12 * MiB);
      expect(read.finishedWhenAnswered).toBe(true);
      expect(errorOf(protocol, read).mailError).not.toBe('too many requests');
      await eventually(async () => (bytes.held() === 0 ? true : undefined));
    }, 60_000);
  }

  it('a call within the caps succeeds, over gRPC and Connect, while another call of its key holds bytes', async () => {
    const { address, bytes } = await startGrpc({ process: 256 * MiB, perKey: 64 * MiB });
    const other = bytes.meter('mk_a');
    other.allocate(60 * MiB);
    const email = { from: 'Sender <sender@example.com>', to: ['a@example.net'], subject: 'Hello', text: 'Hi' };
    const headers = { authorization: 'Bearer mk_a' };
    for (const transport of [
      createGrpcTransport({ baseUrl: `http://${address}` }),
      createConnectTransport({ baseUrl: `http://${address}`, httpVersion: '2' }),
    ]) {
      const answer = await createClient(EmailService, transport).sendEmail(email, { headers });
      expect(answer.id).toBe(SENT_ID);
    }
    other.release();
    await eventually(async () => (bytes.held() === 0 ? true : undefined));
  });

  it('an aborted call gives its bytes back, a declared length or a stream read so far', async () => {
    const { address, bytes } = await startGrpc({ process: 256 * MiB, perKey: 64 * MiB });
    const session = http2.connect(`http://${address}`);
    session.on('error', () => {});
    const streams = (['connect', 'grpc'] as const).map((protocol) => {
      const total = 40 * MiB;
      const req = session.request({
        ':method': 'POST',
        ':path': '/mail.v1.EmailService/SendBatch',
        ...headersFor(protocol, `mk_${protocol}`, total),
      });
      req.on('error', () => {});
      req.write(
        protocol === 'connect'
          ? Buffer.alloc(2 * MiB)
          : Buffer.concat([envelope(Buffer.alloc(0), { declaredLength: total - 5 }), Buffer.alloc(2 * MiB)]),
      );
      return req;
    });
    await eventually(async () =>
      bytes.held('mk_connect') === 40 * MiB && bytes.held('mk_grpc') >= MiB ? true : undefined,
    );
    session.destroy();
    await eventually(async () => (bytes.held() === 0 ? true : undefined));
    expect(streams.every((s) => s.destroyed)).toBe(true);
  });
});
