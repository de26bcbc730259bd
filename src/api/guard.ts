import { assertAllowed, type Operation } from '../domain/permissions.js';
import { AppError } from '../errors.js';
import { isClaimRefused, type AuthService, type Principal } from '../services/auth-service.js';
import type { RateLimiter } from '../services/rate-limiter.js';
import type { UsageRecorder } from '../services/usage-recorder.js';
import { callCredential, type CallContext } from './call-context.js';

/**
 * Every public call goes through here: authenticate the key, take one request from its rate limit
 * (recorded in the call, which every answer reports), count it in the key's usage statistics, then run.
 */
export function createGuard(deps: {
  auth: Pick<AuthService, 'authenticate' | 'authenticateCached' | 'reconfirm'>;
  rateLimiter: RateLimiter;
  usage: UsageRecorder;
}) {
  /**
   * Checks the key and takes one request from its bucket. The REST gateway calls this before reading the
   * body, so a missing key is 401 and an exhausted bucket 429 whatever the body holds. An immediate send
   * may take the key as this process read it lately (auth-service.ts, authenticateCached; `guarded` keeps
   * the promise).
   */
  const admit = (ctx: CallContext): Promise<Principal> =>
    admitAs(ctx, () =>
      ctx.rpc !== undefined && CONFIRMED_BY_STORE.has(ctx.rpc)
        ? deps.auth.authenticateCached(callCredential(ctx))
        : deps.auth.authenticate(callCredential(ctx)),
    );

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
      // A refusal on a cached key is one more answer that must not outlive the key: 401 if it is gone.
      if (principal.claim) await deps.auth.reconfirm(principal.claim);
      throw err;
    }
    ctx.principal = principal;
    return principal;
  }

  async function guarded<T>(ctx: CallContext, run: (principal: Principal) => Promise<T>): Promise<T> {
    const principal = await admit(ctx);
    try {
      const result = await runConfirmed(ctx, principal, run);
      deps.usage.request(principal.keyId, false);
      return result;
    } catch (err) {
      deps.usage.request(principal.keyId, true);
      throw err;
    }
  }

  /**
   * `run`, whose answer stands only on a key as it is now. A principal read afresh is; a cached one (its
   * claim) is once the statement that stored the call's email confirmed it (send-service.ts sets `confirmed`).
   * Otherwise (an error, an Idempotency-Key replayed, a claim the statement refused) the key is read afresh
   * before the call is answered: gone, expired or banned, the answer is its 401; changed (a quota, a status,
   * a permission) and the call refused, it runs again on what the key is now. Running again is safe because
   * nothing a call on a cached key does commits unless its claim is confirmed in the same statement, and
   * whatever it reserved on the way (a quota, an Idempotency-Key) was given back when that statement failed
   * (acceptance.ts); but not after a 503 or an internal error, which may hide a commit whose answer was lost.
   */
  async function runConfirmed<T>(ctx: CallContext, principal: Principal, run: (p: Principal) => Promise<T>) {
    const { claim } = principal;
    if (!claim) return run(principal);
    let outcome: { ok: true; value: T } | { ok: false; err: unknown };
    try {
      outcome = { ok: true, value: await run(principal) };
    } catch (err) {
      outcome = { ok: false, err };
    }
    if (claim.confirmed) return settled(outcome);
    const now = await deps.auth.reconfirm(claim);
    if (outcome.ok || !(isClaimRefused(outcome.err) || (now.changed && refusedBeforeCommit(outcome.err))))
      return settled(outcome);
    ctx.principal = now.principal;
    return run(now.principal);
  }

  return { admit, admitAs, guarded };
}
export type Guard = ReturnType<typeof createGuard>;

/**
 * The RPCs that may be admitted on a cached key: their only commit is a statement that confirms it. An immediate
 * send stores its email by the accept statement, which names the claim (send-service.ts). Every other call
 * reads its key afresh.
 */
const CONFIRMED_BY_STORE = new Set(['sendEmail']);

/** An error that says the call stored nothing: a refusal of the request, not a failure that may hide a commit. */
const refusedBeforeCommit = (err: unknown): boolean =>
  err instanceof AppError && err.kind !== 'unavailable' && err.kind !== 'internal';

function settled<T>(outcome: { ok: true; value: T } | { ok: false; err: unknown }): T {
  if (outcome.ok) return outcome.value;
  throw outcome.err;
}

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
