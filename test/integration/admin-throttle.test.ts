import http from 'node:http';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_AUTH_LIMITS } from '../../src/services/auth-throttle.js';
import { bearer, expectSameError, failed, loadClients, ok, rpc, type GrpcClient } from '../helpers/grpc-client.js';
import { call } from '../helpers/http.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * Failed admin-token attempts are throttled per client address, across REST (also the console's sign-in,
 * which calls the same management API) and gRPC. Linux routes all of 127/8 to loopback, so a test can
 * call from several client addresses by binding the socket's local address.
 */

const stack = useStack();
let admin: GrpcClient;

beforeAll(async () => {
  admin = loadClients(stack.grpcAddress).admin;
});
afterAll(async () => {
  admin?.close();
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: { error?: string; message?: string };
}

/** GET on the management API from the client address `from`. */
function getFrom(from: string, path: string, token?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${stack.admin}${path}`, {
      localAddress: from, agent: false, headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) as Answer['body'] }));
    });
    req.on('error', reject);
  });
}

describe('failed admin-token attempts', () => {
  it(`refuse a client with 429 and Retry-After after ${ADMIN_AUTH_LIMITS.perClient} failures, even with the right token; others are unaffected`, async () => {
    const guesser = '127.0.0.2';
    for (let i = 0; i < ADMIN_AUTH_LIMITS.perClient; i++) {
      const res = await getFrom(guesser, '/accounts', `adm_guess-${i}-${'x'.repeat(32)}`);
      expect(res.status, `attempt ${i + 1}`).toBe(401);
      expect(res.body.error).toBe('unauthorized');
    }
    const refused = await getFrom(guesser, '/accounts', ADMIN_TOKEN);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toBe('too many requests');
    expect(refused.body.message).toMatch(/^Too many failed admin token attempts from this address; retry in \d+ s$/);
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(ADMIN_AUTH_LIMITS.windowMs / 1000);
    // Also a call with no token at all.
    expect((await getFrom(guesser, '/accounts')).status).toBe(429);

    // The operator at another address signs in as usual.
    const operator = await getFrom('127.0.0.3', '/accounts', ADMIN_TOKEN);
    expect(operator.status).toBe(200);
  });

  it('do not count a missing or malformed header (no guess was made)', async () => {
    const client = '127.0.0.4';
    for (let i = 0; i < ADMIN_AUTH_LIMITS.perClient + 5; i++) expect((await getFrom(client, '/accounts')).status).toBe(401);
    expect((await getFrom(client, '/accounts', ADMIN_TOKEN)).status).toBe(200);
  });

  it('over gRPC count against the same address as REST, and are refused with RESOURCE_EXHAUSTED and retry-after', async () => {
    // The gRPC client connects from 127.0.0.1; this test file's other calls come from other addresses.
    for (let i = 0; i < ADMIN_AUTH_LIMITS.perClient; i++) {
      expect(failed(await rpc(admin, 'ListAccounts', {}, bearer(`adm_guess-${i}-${'y'.repeat(32)}`))).code).toBe(grpc.status.UNAUTHENTICATED);
    }
    const refused = failed(await rpc(admin, 'ListAccounts', {}, bearer(ADMIN_TOKEN)));
    const rest = await call('GET', `${stack.admin}/accounts`, { token: ADMIN_TOKEN });
    expect(rest.status).toBe(429);
    expectSameError(refused, grpc.status.RESOURCE_EXHAUSTED, rest.body as { error: string; message: string });
    expect(Number(refused.metadata.get('retry-after')[0])).toBeGreaterThanOrEqual(1);
    expect(rest.headers.get('retry-after')).not.toBeNull();

    // Other addresses still get in over REST.
    expect((await getFrom('127.0.0.5', '/accounts', ADMIN_TOKEN)).status).toBe(200);
    // And the email API (API keys) is not affected by the admin throttle.
    const email = loadClients(stack.grpcAddress).email;
    try {
      expect(ok(await rpc(email, 'ListEmails', {}, bearer(stack.apiKey)))).toBeDefined();
    } finally {
      email.close();
    }
  });
});
