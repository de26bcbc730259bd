import { once } from 'node:events';
import zlib from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../helpers/admin-fixtures.js';
import { bearer, failed, loadClients, ok, rpc, type GrpcClient } from '../helpers/grpc-client.js';
import { envelope, grpcStatus, pushBody, type H2Answer } from '../helpers/h2-push.js';
import { call } from '../helpers/http.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * The gRPC listener judges credentials before it reads a message, reads at most each RPC's limit, and
 * inflates a compressed message no further than that limit; for gRPC, gRPC-Web and Connect alike.
 * The bare HTTP/2 client pushes bodies as fast as flow control allows and records how much had left when
 * the answer came: a server that read the body first would have taken all of it.
 */

const MiB = 1024 * 1024;
const HUGE = 50_000_000;
/** What may leave the client before an answer that reads nothing: HTTP/2 windows and socket buffers. */
const UNREAD_MAX = 4 * MiB;
// Two requests a second per key: a call taken twice from the bucket shows at once (see 'admitted once').
const RATE_LIMIT = 2;

const stack = useStack({ MAILER_RATE_LIMIT: String(RATE_LIMIT) });
let email: GrpcClient;

beforeAll(async () => {
  ({ email } = loadClients(stack.grpcAddress));
});
afterAll(async () => {
  email?.close();
});

/** A key of its own for each call that is admitted, so the small rate limit never refuses one. */
const freshKey = async () => (await createKey(stack, stack.accountId, 'all')).key;

type Protocol = 'grpc' | 'grpc-web' | 'connect';
const PROTOCOLS: Protocol[] = ['grpc', 'grpc-web', 'connect'];

/** Pushes a message of `total` bytes (zeros after `message`) to `procedure` in the given protocol. */
function push(
  protocol: Protocol,
  procedure: string,
  authorization: string | undefined,
  total: number,
  extra: Record<string, string> = {},
) {
  const headers: Record<string, string> = { ...extra };
  if (authorization !== undefined) headers.authorization = authorization;
  if (protocol === 'connect') {
    // A Connect unary call is the bare message, its length declared up front.
    Object.assign(headers, {
      'content-type': 'application/proto',
      'connect-protocol-version': '1',
      'content-length': String(total),
    });
    return pushBody(stack.grpcAddress, procedure, headers, { prefix: Buffer.alloc(0), total });
  }
  headers['content-type'] = protocol === 'grpc' ? 'application/grpc' : 'application/grpc-web+proto';
  if (protocol === 'grpc') headers.te = 'trailers';
  return pushBody(stack.grpcAddress, procedure, headers, {
    prefix: envelope(Buffer.alloc(0), { declaredLength: total - 5 }),
    total,
  });
}

/** The error of an answer as the caller's protocol carries it: code, message and the `mail-error` field. */
function errorOf(
  protocol: Protocol,
  answer: H2Answer,
): { code: string; message: string; mailError: string | undefined; httpStatus: number } {
  if (protocol === 'connect') {
    const body = JSON.parse(answer.body.toString('utf8')) as { code: string; message: string };
    const mailError = answer.headers['mail-error'];
    return {
      code: body.code,
      message: body.message,
      mailError: typeof mailError === 'string' ? mailError : undefined,
      httpStatus: answer.status,
    };
  }
  const s = grpcStatus(answer);
  const name = grpc.status[s.code]!.toLowerCase();
  return { code: name, message: s.message, mailError: s.metadata['mail-error'], httpStatus: answer.status };
}

function expectAnsweredUnread(answer: H2Answer): void {
  expect(answer.finishedWhenAnswered).toBe(false);
  expect(answer.sentWhenAnswered).toBeLessThan(UNREAD_MAX);
}

describe('credentials are judged before the message is read', () => {
  for (const protocol of PROTOCOLS) {
    it(`${protocol}: a 50 MB SendBatch without a valid key is UNAUTHENTICATED before the body is read`, async () => {
      for (const authorization of [
        undefined,
        'Bearer mk_not-a-real-key-0123456789abcdefghijklmnopq',
        'Basic dXNlcjpwYXNz',
      ]) {
        const answer = await push(protocol, '/mail.v1.EmailService/SendBatch', authorization, HUGE);
        expectAnsweredUnread(answer);
        expect(errorOf(protocol, answer)).toEqual({
          code: 'unauthenticated',
          message: 'Invalid or missing API key',
          mailError: 'unauthorized',
          httpStatus: protocol === 'connect' ? 401 : 200,
        });
      }
    });

    it(`${protocol}: a 50 MB admin call with a wrong admin token is UNAUTHENTICATED (not over its limit) before the body is read`, async () => {
      for (const authorization of [undefined, 'Bearer adm_wrong-token', `Bearer ${stack.apiKey}`]) {
        const answer = await push(protocol, '/mail.v1.AdminService/CreateAccount', authorization, HUGE);
        expectAnsweredUnread(answer);
        // The same refusal as the REST management API's for the same header.
        const rest = await call('POST', `${stack.admin}/accounts`, {
          headers: authorization ? { authorization } : {},
          body: { name: 'x' },
        });
        expect(rest.status).toBe(401);
        expect(errorOf(protocol, answer)).toMatchObject({
          code: 'unauthenticated',
          message: rest.body.message,
          mailError: rest.body.error,
        });
      }
    });
  }

  it('gRPC trailers-only: a refusal is one HEADERS frame with the status, as grpc-js and the spec expect', async () => {
    const answer = await push('grpc', '/mail.v1.EmailService/SendEmail', undefined, HUGE);
    expect(answer.headers['grpc-status']).toBe('16');
    expect(answer.headers['mail-error']).toBe('unauthorized');
    expect(answer.trailers).toEqual({});
    expect(answer.body.length).toBe(0);
  });

  it('an unknown grpc-encoding: UNAUTHENTICATED without a key; with one UNIMPLEMENTED naming the encodings taken, unread', async () => {
    const noKey = await push('grpc', '/mail.v1.EmailService/SendBatch', undefined, HUGE, { 'grpc-encoding': 'snappy' });
    expectAnsweredUnread(noKey);
    expect(grpcStatus(noKey).code).toBe(grpc.status.UNAUTHENTICATED);

    const withKey = await push('grpc', '/mail.v1.EmailService/SendBatch', `Bearer ${await freshKey()}`, HUGE, {
      'grpc-encoding': 'snappy',
    });
    expectAnsweredUnread(withKey);
    const s = grpcStatus(withKey);
    expect(s.code).toBe(grpc.status.UNIMPLEMENTED);
    expect(s.message).toBe('unknown compression "snappy": supported encodings are gzip,br');
  });

  it('an admitted call is admitted once: its first answer leaves one request of two in the bucket', async () => {
    const key = await freshKey();
    const call = email.ListEmails!.bind(email);
    const headers = await new Promise<grpc.Metadata>((resolve, reject) => {
      const c = call({ page: 1 }, bearer(key), { deadline: Date.now() + 15_000 }, (err) => {
        if (err) reject(err);
      });
      c.on('metadata', resolve);
    });
    expect(headers.get('ratelimit-limit')).toEqual([String(RATE_LIMIT)]);
    expect(headers.get('ratelimit-remaining')).toEqual(['1']);
    // The second call in the same second still gets through (a double take would have emptied the bucket).
    ok(await rpc(email, 'ListEmails', { page: 1 }, bearer(key)));
  });
});

describe('each RPC reads at most its own limit', () => {
  it('a 2 MiB ListEmails is RESOURCE_EXHAUSTED, `payload too large`, naming the 1 MiB limit (grpc-js)', async () => {
    const err = failed(
      await rpc(email, 'ListEmails', { page: 1, status: 'x'.repeat(2 * MiB) }, bearer(await freshKey())),
    );
    expect(grpc.status[err.code]).toBe('RESOURCE_EXHAUSTED');
    expect(err.details).toBe('The request message exceeds the limit of 1048576 bytes for this method');
    expect(err.metadata.get('mail-error')).toEqual(['payload too large']);
  });

  for (const protocol of PROTOCOLS) {
    it(`${protocol}: a 50 MB GetEmail (limit 1 MiB) is refused as payload too large before it is read`, async () => {
      const answer = await push(protocol, '/mail.v1.EmailService/GetEmail', `Bearer ${await freshKey()}`, HUGE);
      expectAnsweredUnread(answer);
      expect(errorOf(protocol, answer)).toMatchObject({
        code: 'resource_exhausted',
        message: 'The request message exceeds the limit of 1048576 bytes for this method',
        mailError: 'payload too large',
      });
    });
  }

  it('a SendEmail of over 2 MiB with an attachment is accepted and delivered (sends read up to 32 MiB)', async () => {
    const attachment = Buffer.alloc(1.75 * MiB, 7);
    const content = attachment.toString('base64');
    expect(content.length).toBeGreaterThan(2 * MiB);
    const res = ok(
      await rpc(
        email,
        'SendEmail',
        {
          from: 'Sender <sender@example.com>',
          to: ['big@example.net'],
          subject: 'Big over gRPC',
          text: 'see attached',
          attachments: [{ filename: 'big.bin', content, content_type: 'application/octet-stream' }],
        },
        bearer(await freshKey()),
      ),
    );
    expect(res.status).toBe('pending');
    const [msg] = await stack.sink.waitFor(1);
    expect(msg!.parsed.subject).toBe('Big over gRPC');
    expect(msg!.parsed.attachments[0]!.content.equals(attachment)).toBe(true);
  });
});

describe('compressed messages are inflated no further than the limit', () => {
  /** ~200 KB of gzip that inflates to 200 MB of zeros. */
  let bomb: Buffer;
  beforeAll(async () => {
    const gzip = zlib.createGzip({ level: 9 });
    const out: Buffer[] = [];
    gzip.on('data', (c: Buffer) => out.push(c));
    const block = Buffer.alloc(MiB);
    for (let i = 0; i < 200; i++) if (!gzip.write(block)) await once(gzip, 'drain');
    gzip.end();
    await once(gzip, 'end');
    bomb = Buffer.concat(out);
    expect(bomb.length).toBeLessThan(300_000);
  });

  /** Runs `fn` while sampling this process's memory (the service runs in it); answers the peak growth. */
  async function peakGrowth<T>(fn: () => Promise<T>): Promise<{ result: T; growth: number }> {
    const base = process.memoryUsage().arrayBuffers;
    let peak = base;
    const timer = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().arrayBuffers);
    }, 2);
    try {
      const result = await fn();
      return { result, growth: Math.max(peak, process.memoryUsage().arrayBuffers) - base };
    } finally {
      clearInterval(timer);
    }
  }

  for (const [rpcName, limit] of [
    ['ListEmails', MiB],
    ['SendBatch', 64 * MiB],
  ] as const) {
    it(`a gzip bomb (200 MB of zeros) to ${rpcName} is RESOURCE_EXHAUSTED, inflated no further than ${limit / MiB} MiB`, async () => {
      const key = await freshKey();
      const { result: answer, growth } = await peakGrowth(() =>
        pushBody(
          stack.grpcAddress,
          `/mail.v1.EmailService/${rpcName}`,
          {
            'content-type': 'application/grpc',
            te: 'trailers',
            'grpc-encoding': 'gzip',
            authorization: `Bearer ${key}`,
          },
          { prefix: envelope(bomb, { compressed: true }) },
        ),
      );
      const s = grpcStatus(answer);
      expect(s.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      expect(s.message).toBe(`The request message exceeds the limit of ${limit} bytes for this method`);
      expect(s.metadata['mail-error']).toBe('payload too large');
      // Inflating it all would hold 200 MB at least (and take seconds).
      expect(growth).toBeLessThan(limit + 40 * MiB);
      expect(answer.elapsedMs).toBeLessThan(10_000);
    });
  }

  it('a Connect gzip bomb to ListEmails is refused the same way', async () => {
    const answer = await pushBody(
      stack.grpcAddress,
      '/mail.v1.EmailService/ListEmails',
      {
        'content-type': 'application/proto',
        'connect-protocol-version': '1',
        'content-encoding': 'gzip',
        authorization: `Bearer ${await freshKey()}`,
      },
      { prefix: bomb },
    );
    expect(errorOf('connect', answer)).toEqual({
      code: 'resource_exhausted',
      message: 'The request message exceeds the limit of 1048576 bytes for this method',
      mailError: 'payload too large',
      httpStatus: 429,
    });
  });
});
