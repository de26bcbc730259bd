import { AppError } from '../errors.js';
import type { ConsoleSessionsService } from '../services/console-sessions-service.js';
import type { CallContext } from './call-context.js';
import type { Guard } from './guard.js';

/**
 * The console's session cookie as a credential of the REST APIs (docs/operations.md, "Console sessions"). Only the REST
 * gateway takes it (gRPC callers send a key): a request with an Authorization header is judged by that header
 * alone, a request without one by the cookie, which must come with the session's CSRF token. An account
 * session acts as its key on the email API (the key's principal, rate limit and usage, through the guard);
 * the operator's session is the admin token on the management API. Neither crosses to the other API.
 */
export const CONSOLE_COOKIE = 'mailer_console';
export const CSRF_HEADER = 'x-csrf-token';

/** The value of the cookie `name` in a Cookie header (RFC 6265 `name=value; name=value`), if it is there. */
export function cookieValue(header: string | null | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq > 0 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
  }
  return undefined;
}

/** The session cookie's token when the call is to be judged by it: it has no Authorization header. */
function sessionToken(ctx: CallContext): string | undefined {
  if (ctx.requestHeader.has('authorization')) return undefined;
  return cookieValue(ctx.requestHeader.get('cookie'), CONSOLE_COOKIE);
}

type Admit = (ctx: CallContext) => Promise<unknown>;

export function createConsoleSessionAdmission(deps: {
  sessions: ConsoleSessionsService;
  guard: Pick<Guard, 'admitAs'>;
}) {
  const authorize = (ctx: CallContext, token: string) =>
    deps.sessions.authorize(token, ctx.requestHeader.get(CSRF_HEADER) ?? undefined);
  return {
    /** The email API's admission on REST: `admit` (the key), or the account session acting as its key. */
    api:
      (admit: Admit): Admit =>
      async (ctx) => {
        const token = sessionToken(ctx);
        if (token === undefined) return admit(ctx);
        const session = await authorize(ctx, token);
        if (session.kind !== 'account')
          throw new AppError(
            'permission_denied',
            "The operator's console session cannot call the email API: it needs an API key (sign in with one)",
          );
        return deps.guard.admitAs(ctx, () => deps.sessions.principal(session));
      },

    /** The management API's admission on REST: `admit` (the admin token), or the operator's session. */
    admin:
      (admit: Admit): Admit =>
      async (ctx) => {
        const token = sessionToken(ctx);
        if (token === undefined) return admit(ctx);
        const session = await authorize(ctx, token);
        if (session.kind !== 'operator')
          throw new AppError(
            'permission_denied',
            "An account's console session cannot call the management API: it needs the admin token",
          );
        ctx.operator = true;
      },
  };
}
