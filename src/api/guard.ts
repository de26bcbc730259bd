import { assertAllowed, type Operation } from '../domain/permissions.js';
import type { AuthService, Principal } from '../services/auth-service.js';
import type { RateLimiter } from '../services/rate-limiter.js';
import type { UsageRecorder } from '../services/usage-recorder.js';
import { callCredential, type CallContext } from './call-context.js';

/**
 * Every public call goes through here: authenticate the key, take one request from its rate limit
 * (recorded in the call, which every answer reports), count it in the key's usage statistics, then run.
 */
export function createGuard(deps: { auth: AuthService; rateLimiter: RateLimiter; usage: UsageRecorder }) {
  /**
   * Checks the key and takes one request from its bucket. The REST gateway calls this before reading the
   * body, so a missing key is 401 and an exhausted bucket 429 whatever the body holds.
   */
  const admit = (ctx: CallContext): Promise<Principal> =>
    admitAs(ctx, () => deps.auth.authenticate(callCredential(ctx)));

  /**
   * `admit` with the principal found another way: the REST gateway's console session acting as a key
   * (api/console-session-admission.ts), which then takes the key's rate limit and usage like the key itself.
   */
  async function admitAs(ctx: CallContext, authenticate: () => Promise<Principal>): Promise<Principal> {
    if (ctx.principal) return ctx.principal;
    const principal = await authenticate();
    try {
      ctx.rate = await deps.rateLimiter.take(principal.keyId, principal.rateLimit);
    } catch (err) {
      deps.usage.request(principal.keyId, true);
      throw err;
    }
    ctx.principal = principal;
    return principal;
  }

  async function guarded<T>(ctx: CallContext, run: (principal: Principal) => Promise<T>): Promise<T> {
    const principal = await admit(ctx);
    try {
      const result = await run(principal);
      deps.usage.request(principal.keyId, false);
      return result;
    } catch (err) {
      deps.usage.request(principal.keyId, true);
      throw err;
    }
  }

  return { admit, admitAs, guarded };
}
export type Guard = ReturnType<typeof createGuard>;

/**
 * Guarded calls that need `op`: `run` gets the caller's account id once the key's permission and the account's
 * status allow the operation (a 403 otherwise). The account is always the key's own, so no call can name another.
 */
export const permitting =
  (guard: Pick<Guard, 'guarded'>, op: Operation) =>
  <T>(ctx: CallContext, run: (accountId: string) => Promise<T>): Promise<T> =>
    guard.guarded(ctx, (p: Principal) => {
      assertAllowed(p.permission, p.accountStatus, op);
      return run(p.accountId);
    });
