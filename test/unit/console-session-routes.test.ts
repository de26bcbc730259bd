import fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { consoleSessionRoutes } from '../../src/console/console-session-routes.js';
import { AppError } from '../../src/errors.js';
import type { ConsoleSession, ConsoleSessionsService } from '../../src/services/console-sessions-service.js';

/** The service at its seam: one operator session, whatever the credential. */
function fakeSessions(): ConsoleSessionsService {
  const session: ConsoleSession = {
    kind: 'operator',
    keyHash: null,
    csrfToken: 'csrf',
    expiresAt: new Date(Date.now() + 12 * 3_600_000),
  };
  return {
    signIn: async () => ({ token: 'cookie-token', session }),
    resolve: async (token) => {
      if (token !== 'cookie-token') throw new AppError('unauthorized', 'ended');
      return session;
    },
    authorize: async () => session,
    principal: async () => {
      throw new AppError('unauthorized', 'no key');
    },
    whoIs: async () => ({ kind: 'operator' }),
    signOut: async () => {},
  };
}

async function signInCookie(publicUrl: string): Promise<string> {
  const app = fastify();
  await consoleSessionRoutes({ sessions: fakeSessions(), publicUrl })(app);
  const res = await app.inject({ method: 'POST', url: '/console/session', payload: { token: 'adm_x' } });
  expect(res.statusCode).toBe(200);
  await app.close();
  return String(res.headers['set-cookie']);
}

describe('the console session cookie', () => {
  it('is Secure when MAILER_PUBLIC_URL is https, and HttpOnly, SameSite=Strict, Path=/ either way', async () => {
    const https = await signInCookie('https://mail.example.com');
    expect(https).toBe('mailer_console=cookie-token; Path=/; HttpOnly; SameSite=Strict; Max-Age=43200; Secure');
    const http = await signInCookie('http://127.0.0.1:8080');
    expect(http).toBe('mailer_console=cookie-token; Path=/; HttpOnly; SameSite=Strict; Max-Age=43200');
  });
});
