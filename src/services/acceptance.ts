import type { IdempotencyCompletion } from '../db/repos/emails-repo.js';
import type { QuotaRepo } from '../db/repos/quota-repo.js';
import { quotaExceeded, utcDay } from '../domain/quota.js';
import type { Principal } from './auth-service.js';
import type { Idempotency } from './idempotency.js';

/**
 * What every kind of send (single, scheduled, batch) does once its request is valid: answer a replayed
 * Idempotency-Key, count the emails against today's quota (or refuse with the spec's 429), store, and give
 * back the quota and the key if storing fails. `store` writes the key's answer in the same statement as
 * the emails, so a stored send and its answer are never apart.
 */
export interface AcceptanceDeps {
  quota: Pick<QuotaRepo, 'reserve' | 'release' | 'used'>;
  idempotency: Idempotency;
  now: () => Date;
  /** Told when undoing a failed send fails too (the database is likely down): the original error is what the caller gets. */
  onUndoFailed: (err: unknown, what: 'quota' | 'idempotency-key') => void;
}

export interface AcceptRequest<T> {
  principal: Principal;
  operation: string;
  idempotencyKey: string | undefined;
  /** What the key's "same request" is judged by. */
  request: unknown;
  /** Emails counted against the quota. */
  count: number;
  /** The answer, decided before storing (ids are made up front). */
  answer: T;
  store: (completion: IdempotencyCompletion | undefined, now: Date) => Promise<void>;
}

export function createAcceptance(deps: AcceptanceDeps) {
  async function reserveQuota(principal: Principal, n: number, now: Date): Promise<string> {
    const day = utcDay(now);
    const used = await deps.quota.reserve(principal.accountId, day, n, principal.dailyQuota);
    if (used === undefined) throw quotaExceeded(await deps.quota.used(principal.accountId, day), principal.dailyQuota, now);
    return day;
  }

  return async function accept<T>(r: AcceptRequest<T>): Promise<T> {
    const begun = await deps.idempotency.begin<T>(r.principal.accountId, r.idempotencyKey, r.operation, r.request);
    if ('replay' in begun) return begun.replay;
    const now = deps.now();
    let day: string | undefined;
    try {
      day = await reserveQuota(r.principal, r.count, now);
      await r.store(begun.scope && { ...begun.scope, response: r.answer }, now);
      return r.answer;
    } catch (err) {
      if (day !== undefined) await deps.quota.release(r.principal.accountId, day, r.count).catch((e: unknown) => deps.onUndoFailed(e, 'quota'));
      await deps.idempotency.abandon(begun.scope).catch((e: unknown) => deps.onUndoFailed(e, 'idempotency-key'));
      throw err;
    }
  };
}
export type Accept = ReturnType<typeof createAcceptance>;
