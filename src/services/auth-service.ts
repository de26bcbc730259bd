import type { KeyPrincipalRow } from '../domain/entities/api-keys.js';
import type { AccountStatus, Permission } from '../domain/catalog.js';
import type { PrincipalClaim } from '../db/repos/principal-claims.js';
import { AppError } from '../errors.js';
import type { AuthThrottle } from './auth-throttle.js';
import type { PrincipalCache } from './principal-cache.js';
import { digestsEqual, hashSecret, looksLikeApiKey, secretsEqual } from './secrets.js';

/** Who is calling: an API key of an account, with what the key and the account allow. */
export interface Principal {
  keyId: string;
  accountId: string;
  permission: Permission;
  allowedDomains: string[];
  accountStatus: AccountStatus;
  dailyQuota: number;
  /** The key's own requests per second (absent: MAILER_RATE_LIMIT). */
  rateLimit?: number | undefined;
  /** The key's own emails per UTC day, checked with the account's (absent: the account's quota alone). */
  keyDailyQuota?: number | undefined;
  /**
   * Set when the key came from this process's cache (authenticateCached): what the call claims of it, to be
   * confirmed by the statement that stores its email or else read afresh before the call is answered (api/guard.ts).
   */
  claim?: KeyClaim | undefined;
}

/** A cached key as a call claims it (PrincipalClaim), the hash to read it afresh by, and whether it was confirmed. */
export interface KeyClaim extends PrincipalClaim {
  keyHash: Buffer;
  /** Set once a committed statement confirmed the claim: the call's answer stands as it is. */
  confirmed: boolean;
}

export interface AuthDeps {
  findPrincipal(keyHash: Buffer): Promise<KeyPrincipalRow | undefined>;
  adminToken: string;
  /** Counts failed admin-token attempts; answers a client's (or everyone's) further failures 429 past the limit. */
  adminThrottle: AuthThrottle;
  /** When set, GET /metrics needs it; unset, /metrics is open. */
  metricsToken?: string | undefined;
  /** The clock a key's expiry is judged by (unit tests set it). */
  now?: () => Date;
  /** The keys read lately, for authenticateCached; absent, it reads every key afresh. */
  cache?: PrincipalCache;
}

/** Whether a store failed because the cached key it claimed is gone or changed (api/guard.ts runs the call again). */
export { isClaimRefused } from '../db/repos/principal-claims.js';

const INVALID_KEY = 'Invalid or missing API key';

const unauthorized = (message = INVALID_KEY) => new AppError('unauthorized', message);

/**
 * Each check takes the credential its adapter extracted from the call (undefined when there was none,
 * or none well-formed), so that this knows no header syntax.
 */
export function createAuthService(deps: AuthDeps) {
  /**
   * A request reads its key afresh (one indexed query): a deleted key, a banned or paused account
   * takes effect on the very next request, in every process, with no cache to invalidate. `hash` is the
   * key's SHA-256: of the key the request carries, or stored in the console session acting as it.
   * (An immediate send may use what was read before, confirmed where its email is stored: authenticateCached.)
   */
  async function principalOf(hash: Buffer, missing: string): Promise<Principal> {
    const row = await deps.findPrincipal(hash);
    const principal = judged(row, hash, missing);
    deps.cache?.set(row!);
    return principal;
  }

  function judged(row: KeyPrincipalRow | undefined, hash: Buffer, missing: string): Principal {
    if (!row || !digestsEqual(row.keyHash, hash)) throw unauthorized(missing);
    if (row.accountStatus === 'banned') throw unauthorized('This account is banned');
    // From that moment on (every request reads the key afresh); judged after the constant-time compare, so
    // only the key's holder learns that it expired.
    if (row.expiresAt !== null && row.expiresAt.getTime() <= (deps.now?.() ?? new Date()).getTime())
      throw unauthorized(`This API key expired at ${row.expiresAt.toISOString()}`);
    return {
      keyId: row.keyId,
      accountId: row.accountId,
      permission: row.permission,
      allowedDomains: row.allowedDomains,
      accountStatus: row.accountStatus,
      dailyQuota: row.dailyQuota,
      ...(row.rateLimit === null ? {} : { rateLimit: row.rateLimit }),
      ...(row.keyDailyQuota === null ? {} : { keyDailyQuota: row.keyDailyQuota }),
    };
  }

  return {
    async authenticate(key: string | undefined): Promise<Principal> {
      if (key === undefined || !looksLikeApiKey(key)) throw unauthorized();
      return principalOf(hashSecret(key), INVALID_KEY);
    },

    /**
     * `authenticate` for an immediate send, which may take its key as this process read it lately: the key's
     * statement and round trip were one of an accept's two (docs/benchmark.md, "Session 23"). The principal then
     * carries a claim, and the promise of `authenticate` is kept where the email commits: the accept statement
     * confirms the claim (migration 0038) or stores nothing, and a call whose claim no statement confirmed reads
     * the key afresh before it is answered, and runs again if the key changed (api/guard.ts). A key not in the
     * cache, or no longer passing its checks there (expired since), is read afresh, as `authenticate` does.
     */
    async authenticateCached(key: string | undefined): Promise<Principal> {
      if (key === undefined || !looksLikeApiKey(key)) throw unauthorized();
      const hash = hashSecret(key);
      const row = deps.cache?.get(hash);
      if (row === undefined) return principalOf(hash, INVALID_KEY);
      let principal: Principal;
      try {
        principal = judged(row, hash, INVALID_KEY);
      } catch {
        deps.cache?.forget(hash);
        return principalOf(hash, INVALID_KEY);
      }
      return {
        ...principal,
        claim: { keyId: row.keyId, fingerprint: row.fingerprint, keyHash: hash, confirmed: false },
      };
    },

    /**
     * A claim no statement confirmed, read afresh: the key's principal as it is now (or its 401), and whether it
     * changed since it was cached.
     */
    async reconfirm(claim: KeyClaim): Promise<{ principal: Principal; changed: boolean }> {
      deps.cache?.forget(claim.keyHash);
      const row = await deps.findPrincipal(claim.keyHash);
      const principal = judged(row, claim.keyHash, INVALID_KEY);
      deps.cache?.set(row!);
      return { principal, changed: row!.fingerprint !== claim.fingerprint };
    },

    /**
     * `client` is the caller's network address. The token is checked first, in constant time, and the right
     * one is always accepted: the throttle only answers wrong tokens (429 past the limit, else 401), so
     * failures from the same address (a reverse proxy every client shares) never lock the operator out.
     * Only well-formed tokens that are wrong count as failures: a missing or malformed credential is no guess.
     */
    authenticateAdmin(token: string | undefined, client: string): void {
      if (token === undefined) throw unauthorized('Invalid or missing admin token');
      if (secretsEqual(token, deps.adminToken)) return;
      throw deps.adminThrottle.failed(client) ?? unauthorized('Invalid or missing admin token');
    },

    authenticateMetrics: metricsGate(deps.metricsToken),

    /**
     * A console session acting as a key (console-sessions-service.ts): the key's stored hash, read from the
     * session row, judged by the same `principalOf` as the key itself, so the session sees exactly what the
     * key sees and a deleted key, an expired one or a banned account ends its sessions at their next request.
     */
    authenticateKeyHash: (keyHash: Buffer): Promise<Principal> =>
      principalOf(keyHash, 'The API key this console session signed in with no longer exists: sign in again'),
  };
}
export type AuthService = ReturnType<typeof createAuthService>;

/** Who may read /metrics: anyone when MAILER_METRICS_TOKEN is unset, else only its bearer (compared in constant time). */
export function metricsGate(metricsToken: string | undefined): (token: string | undefined) => void {
  return (token) => {
    if (metricsToken === undefined) return;
    if (token === undefined || !secretsEqual(token, metricsToken))
      throw unauthorized('Invalid or missing metrics token');
  };
}
