import { AppError } from '../errors.js';
import type { AuthService, Principal } from '../services/auth-service.js';
import type { RateLimiter } from '../services/rate-limiter.js';
import type { UsageRecorder } from '../services/usage-recorder.js';
import type { CallContext } from './call-context.js';

/**
 * Every public call goes through here: authenticate the key, take one request from its rate limit
 * (RateLimit-* headers on every answer), count it in the key's usage statistics, then run.
 */
export function createGuard(deps: { auth: AuthService; rateLimiter: RateLimiter; usage: UsageRecorder }) {
  return async function guarded<T>(ctx: CallContext, run: (principal: Principal) => Promise<T>): Promise<T> {
    const principal = await deps.auth.authenticate(ctx.requestHeader.get('authorization'));
    try {
      const rate = deps.rateLimiter.take(principal.keyId);
      ctx.responseHeader.set('ratelimit-limit', String(rate.limit));
      ctx.responseHeader.set('ratelimit-remaining', String(rate.remaining));
      ctx.responseHeader.set('ratelimit-reset', String(rate.reset));
      const result = await run(principal);
      deps.usage.request(principal.keyId, false);
      return result;
    } catch (err) {
      deps.usage.request(principal.keyId, true);
      if (err instanceof AppError) for (const [k, v] of Object.entries(err.headers)) ctx.responseHeader.set(k, v);
      throw err;
    }
  };
}
export type Guard = ReturnType<typeof createGuard>;
