import http2 from 'node:http2';
import net from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, validEmail, type JsonResponse } from '../helpers/http.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * Whatever refuses a request (the router, the body parser, the URL decoder, Node's HTTP parser) answers in
 * the spec's `{error, message}` shape with the service's own lowercase `error` strings, never a framework's.
 */

const stack = useStack();
let origin: string;
beforeAll(async () => {
  origin = stack.api.replace(/\/v1\/mail$/, '');
});

function expectShape(res: JsonResponse, status: number, error: string, message?: RegExp): void {
  expect(res.status, res.text.slice(0, 300)).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(Object.keys(res.body).sort()).toEqual(['error', 'message']);
  expect(res.body.error).toBe(error);
  if (message) expect(res.body.message).toMatch(message);
}

/** Sends raw bytes and reads the whole answer (the server closes the connection after a protocol error). */
function rawRequest(bytes: string): Promise<{ status: number; headers: string; body: Record<string, unknown> }> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(bytes));
    let data = '';
    socket.on('data', (c) => (data += c.toString('utf8')));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = data.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), headers: head, body: JSON.parse(body) as Record<string, unknown> });
    });
  });
}

describe('framework errors in the spec shape', () => {
  it('an unknown route is 404 not found', async () => {
    expectShape(
      await call('GET', `${stack.api}/nothing-here`, { token: stack.apiKey }),
      404,
      'not found',
      /route GET \/v1\/mail\/nothing-here not found/,
    );
    expectShape(await call('GET', `${origin}/elsewhere`), 404, 'not found');
  });

  it('a known path with another method is 405 with Allow', async () => {
    const res = await call('PUT', `${stack.api}/emails`, { token: stack.apiKey, body: validEmail() });
    expectShape(res, 405, 'method not allowed', /answers GET, HEAD, POST/);
    expect(res.headers.get('allow')).toBe('GET, HEAD, POST');
    const one = await call('POST', `${stack.api}/emails/em_123`, { token: stack.apiKey, body: {} });
    expectShape(one, 405, 'method not allowed');
    expect(one.headers.get('allow')).toBe('GET, HEAD');
    const admin = await call('PUT', `${stack.admin}/accounts/acc_1`, { token: 'x', body: {} });
    expect(admin.headers.get('allow')).toBe('GET, HEAD, PATCH');
    // A method whose requests carry a body is answered before any body is read or judged.
    const query = await rawRequest(`QUERY /v1/mail/emails/em_1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(query.status).toBe(405);
    expect(query.body.error).toBe('method not allowed');
  });

  it('a body over the endpoint limit is 413 payload too large', async () => {
    const res = await call('POST', `${stack.admin}/accounts`, {
      token: 'x'.repeat(40),
      rawBody: JSON.stringify({ name: 'n'.repeat(2 * 1024 * 1024) }),
    });
    // The management API judges the token first: a wrong one is 401 whatever the body.
    expect(res.status).toBe(401);
    const accounts = await call('POST', `${stack.admin}/accounts`, {
      token: ADMIN_TOKEN,
      rawBody: JSON.stringify({ name: 'n'.repeat(2 * 1024 * 1024) }),
    });
    expectShape(accounts, 413, 'payload too large', /exceeds the limit of 1048576 bytes/);
    const send = await call('POST', `${stack.api}/emails/batch`, {
      token: stack.apiKey,
      rawBody: `{"emails":["${'x'.repeat(65 * 1024 * 1024)}"]}`,
    });
    expectShape(send, 413, 'payload too large', /exceeds the limit of 67108864 bytes/);
  });

  it('a URL over 8 KiB is 414 uri too long', async () => {
    expectShape(
      await call('GET', `${stack.api}/emails?job_id=${'a'.repeat(9000)}`, { token: stack.apiKey }),
      414,
      'uri too long',
      /maximum is 8192/,
    );
  });

  it('a compressed body is 415 unsupported media type', async () => {
    const res = await call('POST', `${stack.api}/emails`, {
      token: stack.apiKey,
      rawBody: '\x1f\x8b\x08',
      headers: { 'content-encoding': 'gzip', 'content-type': 'application/json' },
    });
    expectShape(res, 415, 'unsupported media type', /Content-Encoding gzip/);
  });

  it('a URL with bad percent-encoding is 400 validation error', async () => {
    expectShape(
      await call('GET', `${stack.api}/emails/%zz`, { token: stack.apiKey }),
      400,
      'validation error',
      /URL is not valid/,
    );
    expectShape(
      await call('GET', `${stack.api}/emails/scheduled/sch_%ED%A0%80`, { token: stack.apiKey }),
      400,
      'validation error',
    );
  });

  it('malformed JSON and a JSON body that is not an object are 400 validation error', async () => {
    expectShape(
      await call('POST', `${stack.api}/emails`, { token: stack.apiKey, rawBody: '{"from":' }),
      400,
      'validation error',
      /not valid JSON/,
    );
    expectShape(
      await call('POST', `${stack.api}/emails`, { token: stack.apiKey, rawBody: '[1]' }),
      400,
      'validation error',
      /JSON object/,
    );
  });

  it("what Node's HTTP parser refuses is answered in the same shape", async () => {
    const garbage = await rawRequest('NOT HTTP AT ALL\r\n\r\n');
    expect(garbage.status).toBe(400);
    expect(garbage.body).toEqual({ error: 'validation error', message: 'The request is not valid HTTP/1.1' });
    const huge = await rawRequest(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`);
    expect(huge.status).toBe(431);
    expect(huge.body.error).toBe('request header fields too large');
  });

  it('the gRPC listener answers a path that is no RPC in the same shape', async () => {
    const session = http2.connect(`http://${stack.grpcAddress}`);
    try {
      const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = session.request({
          ':method': 'POST',
          ':path': '/mail.v1.NoSuchService/Nothing',
          'content-type': 'application/json',
        });
        let status = 0;
        let body = '';
        req.on('response', (h) => (status = Number(h[':status'])));
        req.on('data', (c: Buffer) => (body += c.toString()));
        req.on('end', () => resolve({ status, body }));
        req.on('error', reject);
        req.end('{}');
      });
      expect(status).toBe(404);
      expect(JSON.parse(body)).toEqual({
        error: 'not found',
        message: 'procedure /mail.v1.NoSuchService/Nothing not found',
      });
    } finally {
      session.close();
    }
  });
});
