import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CONSOLE_COOKIE, cookieValue, CSRF_HEADER } from '../api/console-session-admission.js';
import { AppError, invalid } from '../errors.js';
import type { ConsoleSession, ConsoleSessionsService } from '../services/console-sessions-service.js';
import { CONSOLE_PATH } from './console-plugin.js';

/**
 * The console's sign-in (docs/operations.md, "Console sessions"): `POST /console/session {token}` with the admin token or an
 * API key of permission `all` sets the session cookie; `GET` says who is signed in (`kind: null`: no one) and hands
 * the page the CSRF token it keeps in memory; `DELETE` signs out. These are the console's own routes, not an API for programs
 * (which send their key on each call), so they are left out of the OpenAPI document.
 */
export const SESSION_PATH = `${CONSOLE_PATH}/session`;

export interface ConsoleSessionRoutesOptions {
  sessions: ConsoleSessionsService;
  /** MAILER_PUBLIC_URL: the cookie is Secure when it is https. */
  publicUrl: string;
}

export function consoleSessionRoutes(options: ConsoleSessionRoutesOptions): (app: FastifyInstance) => Promise<void> {
  const secure = new URL(options.publicUrl).protocol === 'https:';
  /**
   * HttpOnly: no script reads it (an injected one included). SameSite=Strict: no other site's page sends it.
   * Path=/ because both APIs under /v1/mail take it, not only /console.
   */
  const cookie = (value: string, maxAgeSeconds: number) =>
    `${CONSOLE_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
  const { sessions } = options;
  const token = (request: FastifyRequest) => cookieValue(request.headers.cookie, CONSOLE_COOKIE);
  const answer = async (reply: FastifyReply, session: ConsoleSession) => {
    // The CSRF token is in this answer: it is never to be cached, nor the cookie's Set-Cookie.
    void reply.header('cache-control', 'no-store');
    return { ...(await sessions.whoIs(session)), csrf_token: session.csrfToken, expires_at: session.expiresAt };
  };

  return async (app) => {
    app.post(SESSION_PATH, async (request, reply) => {
      // Login CSRF: a page of another site could sign the browser in to the attacker's account. Its forms can
      // send only form or text bodies, and its scripts a JSON one only after a CORS preflight this never allows.
      const type = request.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
      if (type !== 'application/json')
        throw new AppError('unsupported_media_type', 'Sign in with a JSON body: Content-Type: application/json');
      const body = request.body;
      const credential =
        typeof body === 'object' && body !== null && 'token' in body && typeof body.token === 'string'
          ? body.token.trim()
          : undefined;
      if (credential === undefined)
        throw invalid('The body must be {"token": "<the admin token or an API key of permission all>"}');
      const signedIn = await sessions.signIn(credential, request.ip);
      const maxAge = Math.max(1, Math.round((signedIn.session.expiresAt.getTime() - Date.now()) / 1000));
      void reply.header('set-cookie', cookie(signedIn.token, maxAge));
      return answer(reply, signedIn.session);
    });

    // Signed out (no cookie, its session ended, or its key deleted) is an answer, not a failure: `{kind: null}` with 200, so that
    // the console's first question at every load logs no failed request in a browser that is not signed in.
    app.get(SESSION_PATH, async (request, reply) => {
      try {
        return await answer(reply, await sessions.resolve(token(request)));
      } catch (err) {
        if (!(err instanceof AppError && err.kind === 'unauthorized')) throw err;
        void reply.header('cache-control', 'no-store');
        return { kind: null };
      }
    });

    // Signing out needs the CSRF token too, so that no other page can end the session (SameSite already stops it).
    // A session that has already ended is signed out: its cookie is cleared all the same.
    app.delete(SESSION_PATH, async (request, reply) => {
      const value = token(request);
      const csrf = request.headers[CSRF_HEADER];
      let ended = false;
      try {
        await sessions.resolve(value);
      } catch (err) {
        if (!(err instanceof AppError && err.kind === 'unauthorized')) throw err;
        ended = true;
      }
      if (!ended && value !== undefined) {
        await sessions.authorize(value, typeof csrf === 'string' ? csrf : undefined);
        await sessions.signOut(value);
      }
      void reply.header('set-cookie', cookie('', 0)).header('cache-control', 'no-store');
      return { success: true, message: 'Signed out' };
    });
  };
}
