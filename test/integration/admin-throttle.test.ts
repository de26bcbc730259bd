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
 * which calls the same management API) and gRPC; the right token is never refused. Linux routes all of
 * 127/8 to loopback, so a test can call from several client addresses by binding the socket's local address.
 */

/** A reverse proxy of this stack (MAILER_TRUSTED_PROXIES): its X-Forwarded-For names the client. */
const PROXY = '127.0.0.10';
const stack = useStack({ MAILER_TRUSTED_PROXIES: PROXY });
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

/** GET on the management API from the client address `from`, with an X-Forwarded-For when `forwardedFor` is given. */
function getFrom(from: string, path: string, token?: string, forwardedFor?: string): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (forwardedFor !== undefined) headers['x-forwarded-for'] = forwardedFor;
  return new Promise((resolve, reject) => {
    const req = http.get(`${stack.admin}${path}`, { localAddress: from, agent: false, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) as Answer['body'] }),
      );
    });
    req.on('error', reject);
  });
}

const guess = (i: number, c = 'x') => `adm_guess-${i}-${c.repeat(32)}`;

describe('failed admin-token attempts', () => {
  it(`answer a client's wrong tokens 429 with Retry-After after ${ADMIN_AUTH_LIMITS.perClient} failures, yet let the right token in from that very address`, async () => {
    const guesser = '127.0.0.2';
    for (let i = 0; i < ADMIN_AUTH_LIMITS.perClient; i++) {
      const res = await getFrom(guesser, '/accounts', guess(i));
      expect(res.status, `attempt ${i + 1}`).toBe(401);
      expect(res.body.error).toBe('unauthorized');
    }
    const refused = await getFrom(guesser, '/accounts', guess(99));
    expect(refused.status).toBe(429);
    expect(refused.body.error).toBe('too many requests');
    expect(refused.body.message).toMatch(/^Too many failed admin token attempts from this address; retry in \d+ s$/);
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(ADMIN_AUTH_LIMITS.windowMs / 1000);

    // The operator behind the same address (a NAT, a proxy) signs in as usual, and so does anyone elsewhere.
    expect((await getFrom(guesser, '/accounts', ADMIN_TOKEN)).status).toBe(200);
    expect((await getFrom('127.0.0.3', '/accounts', ADMIN_TOKEN)).status).toBe(200);
    // A call with no token at all is no guess: 401.
    expect((await getFrom(guesser, '/accounts')).status).toBe(401);
  });

  it('behind a trusted proxy count each client by its X-Forwarded-For, and never by what an untrusted peer claims', async () => {
    // Two clients behind the proxy: the guesser's failures are its own.
    for (let i = 0; i <= ADMIN_AUTH_LIMITS.perClient; i++)
      await getFrom(PROXY, '/accounts', guess(i, 'p'), '198.51.100.1');
    expect((await getFrom(PROXY, '/accounts', guess(0, 'q'), '198.51.100.1')).status).toBe(429);
    expect((await getFrom(PROXY, '/accounts', guess(0, 'q'), '198.51.100.2')).status).toBe(401);
    expect((await getFrom(PROXY, '/accounts', ADMIN_TOKEN, '198.51.100.1')).status).toBe(200);
    // A peer that is no listed proxy is counted as itself, whatever address it names.
    const liar = '127.0.0.11';
    for (let i = 0; i < ADMIN_AUTH_LIMITS.perClient; i++) {
      expect((await getFrom(liar, '/accounts', guess(i, 'l'), `203.0.113.${i}`)).status).toBe(401);
    }
    expect((await getFrom(liar, '/accounts', guess(99, 'l'), '203.0.113.200')).status).toBe(429);
  });

  it('do not count a missing or malformed header (no guess was made)', async () => {
    const client = '127.0.0.4';
    for (let i = 0; i < ADMIN_AUTH_LIMITS.perClient + 5; i++)
      expect((await getFrom(client, '/accounts')).status).toBe(401);
    expect((await getFrom(client, '/accounts', guess(0, 'm'))).status).toBe(401);
  });

  it('over gRPC count against the same address as REST, and are answered RESOURCE_EXHAUSTED with retry-after; the right token still passes', async () => {
    // The gRPC client connects from 127.0.0.1; this test file's other calls come from other addresses.
    for (let i = 0; i < ADMIN_AUTH_LIMITS.perClient; i++) {
      expect(failed(await rpc(admin, 'ListAccounts', {}, bearer(guess(i, 'y')))).code).toBe(
        grpc.status.UNAUTHENTICATED,
      );
    }
    const refused = failed(await rpc(admin, 'ListAccounts', {}, bearer(guess(99, 'y'))));
    const rest = await call('GET', `${stack.admin}/accounts`, { token: guess(100, 'y') });
    expect(rest.status).toBe(429);
    expectSameError(refused, grpc.status.RESOURCE_EXHAUSTED, rest.body as { error: string; message: string });
    expect(Number(refused.metadata.get('retry-after')[0])).toBeGreaterThanOrEqual(1);
    expect(rest.headers.get('retry-after')).not.toBeNull();

    // The right token from the same address, over both.
    expect(ok(await rpc(admin, 'ListAccounts', {}, bearer(ADMIN_TOKEN)))).toBeDefined();
    expect((await call('GET', `${stack.admin}/accounts`, { token: ADMIN_TOKEN })).status).toBe(200);
    // And the email API (API keys) is not affected by the admin throttle.
    const email = loadClients(stack.grpcAddress).email;
    try {
      expect(ok(await rpc(email, 'ListEmails', {}, bearer(stack.apiKey)))).toBeDefined();
    } finally {
      email.close();
    }
  });
});
