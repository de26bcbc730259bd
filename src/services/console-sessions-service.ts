import type { AccountsRepo, ConsoleSessionsRepo } from '../db/index.js';
import { AppError, invalid } from '../errors.js';
import type { AuthService, Principal } from './auth-service.js';
import type { AuthThrottle } from './auth-throttle.js';
import crypto from 'node:crypto';
import { generateToken, hashSecret, looksLikeApiKey, secretsEqual } from './secrets.js';

/**
 * The console's sign-in (docs/operations.md, "Console sessions"): the admin token makes an operator session, an API key of
 * permission `all` an account session that acts as that key. The browser holds a random token in an HttpOnly
 * cookie; the database holds only its SHA-256, the key the session acts as (never the key itself) and the CSRF
 * token every request the cookie authenticates must echo in a header (a page of another site can make the
 * browser send the cookie, never read the token). This knows no header or cookie syntax: adapters hand it the
 * values they extracted.
 */
export type ConsoleSessionKind = 'operator' | 'account';

export interface ConsoleSession {
  kind: ConsoleSessionKind;
  /** The stored hash of the key an account session acts as (null for the operator's). */
  keyHash: Buffer | null;
  csrfToken: string;
  expiresAt: Date;
}

export interface ConsoleSessionsDeps {
  sessions: ConsoleSessionsRepo;
  accounts: Pick<AccountsRepo, 'get'>;
  auth: Pick<AuthService, 'authenticate' | 'authenticateAdmin' | 'authenticateKeyHash'>;
  /** The admin token's throttle: a wrong key at sign-in is a guess like a wrong token, counted with them. */
  throttle: AuthThrottle;
  /** How long a session lasts from its sign-in (MAILER_CONSOLE_SESSION_HOURS). */
  lifetimeMs: number;
  /** The admin token: operator sessions are stored under an HMAC of their token keyed by it, so changing it ends them. */
  adminToken: string;
  now?: () => number;
}

const ENDED = 'No console session, or it has ended: sign in again';

export function createConsoleSessionsService(deps: ConsoleSessionsDeps) {
  const now = deps.now ?? Date.now;
  // An operator who changes a leaked admin token must not leave sessions signed in with it running for hours.
  const operatorHash = (token: string) => crypto.createHmac('sha256', deps.adminToken).update(token).digest();

  /** The principal of a sign-in credential that looks like an API key; a wrong one counts as a failed guess. */
  async function keyPrincipal(key: string, client: string): Promise<Principal> {
    try {
      return await deps.auth.authenticate(key);
    } catch (err) {
      if (err instanceof AppError && err.kind === 'unauthorized') throw deps.throttle.failed(client) ?? err;
      throw err;
    }
  }

  /** The session of a cookie's token; 401 when there is none or it has expired. */
  async function resolve(token: string | undefined): Promise<ConsoleSession> {
    const row =
      token === undefined || token === ''
        ? undefined
        : await deps.sessions.find(hashSecret(token), operatorHash(token));
    if (!row) throw new AppError('unauthorized', ENDED);
    return {
      kind: row.apiKeyId === null ? 'operator' : 'account',
      keyHash: row.keyHash,
      csrfToken: row.csrfToken,
      expiresAt: row.expiresAt,
    };
  }

  /** The principal an account session acts as, by the key's stored hash (401 once the key is gone). */
  async function sessionPrincipal(session: ConsoleSession): Promise<Principal> {
    if (session.keyHash === null) throw new AppError('unauthorized', ENDED);
    return deps.auth.authenticateKeyHash(session.keyHash);
  }

  return {
    /**
     * Signs in with the admin token or an API key of permission `all` (a `read_only` or `send_only` key is
     * refused 403: the console manages the account). `client` is the caller's address, for the throttle.
     * Answers the cookie's token, shown here only.
     */
    async signIn(credential: string, client: string): Promise<{ token: string; session: ConsoleSession }> {
      if (credential === '') throw invalid('token is required: the admin token or an API key of permission all');
      let keyId: string | null = null;
      let keyHash: Buffer | null = null;
      if (looksLikeApiKey(credential)) {
        const principal = await keyPrincipal(credential, client);
        if (principal.permission !== 'all')
          throw new AppError(
            'permission_denied',
            `The console needs an API key of permission all; this key's permission is ${principal.permission}`,
          );
        keyId = principal.keyId;
        keyHash = hashSecret(credential);
      } else {
        deps.auth.authenticateAdmin(credential, client);
      }
      await deps.sessions.purgeExpired();
      const token = generateToken(32);
      const session: ConsoleSession = {
        kind: keyId === null ? 'operator' : 'account',
        keyHash,
        csrfToken: generateToken(32),
        expiresAt: new Date(now() + deps.lifetimeMs),
      };
      await deps.sessions.create({
        tokenHash: keyId === null ? operatorHash(token) : hashSecret(token),
        apiKeyId: keyId,
        csrfToken: session.csrfToken,
        expiresAt: session.expiresAt,
      });
      return { token, session };
    },

    resolve,

    /**
     * The session of a request the cookie authenticates: it must carry the session's CSRF token (403 without it
     * or with another), whatever its method, so that no page of another origin acts through the cookie.
     */
    async authorize(token: string | undefined, csrfToken: string | undefined): Promise<ConsoleSession> {
      const session = await resolve(token);
      if (csrfToken === undefined || !secretsEqual(csrfToken, session.csrfToken))
        throw new AppError(
          'permission_denied',
          'A request authenticated by the console session must carry its CSRF token in X-CSRF-Token',
        );
      return session;
    },

    principal: sessionPrincipal,

    /** Who is signed in: the operator, or the account (id and name) of the key the session acts as. */
    async whoIs(
      session: ConsoleSession,
    ): Promise<{ kind: ConsoleSessionKind; account?: { id: string; name: string } }> {
      if (session.kind === 'operator') return { kind: 'operator' };
      const principal = await sessionPrincipal(session);
      const account = await deps.accounts.get(principal.accountId);
      if (!account) throw new AppError('unauthorized', ENDED);
      return { kind: 'account', account: { id: account.id, name: account.name } };
    },

    async signOut(token: string): Promise<void> {
      await deps.sessions.delete(hashSecret(token), operatorHash(token));
    },
  };
}
export type ConsoleSessionsService = ReturnType<typeof createConsoleSessionsService>;
