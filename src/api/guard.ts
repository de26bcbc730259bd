import { AppError } from '../errors.js';
import type { AuthService, Principal } from '../services/auth-service.js';
import type { RateLimiter } from '../services/rate-limiter.js';
import type { UsageRecorder } from '../services/usage-recorder.js';
import type { CallContext } from './call-context.js';

const copyHeaders = (err: unknown, ctx: CallContext) => {
  if (err instanceof AppError) for (const [k, v] of Object.entries(err.headers)) ctx.responseHeader.set(k, v);
};

/**
 * Every public call goes through here: authenticate the key, take one request from its rate limit
 * (RateLimit-* headers on every answer), count it in the key's usage statistics, then run.
 */
export function createGuard(deps: { auth: AuthService; rateLimiter: RateLimiter; usage: UsageRecorder }) {
  /**
   * Checks the key and takes one request from its bucket. The REST gateway calls this before reading the
   * body, so a missing key is 401 and an exhausted bucket 429 whatever the body holds.
   */
  async function admit(ctx: CallContext): Promise<Principal> {
    if (ctx.principal) return ctx.principal;
    const principal = await deps.auth.authenticate(ctx.requestHeader.get('authorization'));
    try {
      const rate = deps.rateLimiter.take(principal.keyId);
      ctx.responseHeader.set('ratelimit-limit', String(rate.limit));
      ctx.responseHeader.set('ratelimit-remaining', String(rate.remaining));
      ctx.responseHeader.set('ratelimit-reset', String(rate.reset));
    } catch (err) {
      deps.usage.request(principal.keyId, true);
      copyHeaders(err, ctx);
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
      copyHeaders(err, ctx);
      throw err;
    }
  }

  return { admit, guarded };
}
export type Guard = ReturnType<typeof createGuard>;
