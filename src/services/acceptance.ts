import { isCommitOutcomeUnknown } from '../db/db-unavailable.js';
import type { AcceptedTable } from '../db/index.js';
import type { IdempotencyCompletion } from '../domain/entities/emails.js';
import type { QuotaRepo } from '../db/index.js';
import { isQuotaRefused, type QuotaCounter } from '../db/repos/quota-repo.js';
import { unavailable } from '../errors.js';
import { keyQuotaExceeded, quotaExceeded, utcDay } from '../domain/quota.js';
import type { Principal } from './auth-service.js';
import type { Idempotency } from './idempotency.js';

/**
 * What every kind of send (single, scheduled, batch) does once its request is valid: answer a replayed
 * Idempotency-Key, count the emails against today's quota (or refuse with the spec's 429), store, and give
 * back the quota and the key if storing fails. `store` writes the key's answer in the same statement as
 * the emails, so a stored send and its answer are never apart.
 *
 * A 503 means "not accepted": a client told so sends again. When the connection dies while the store is in
 * flight, the commit may have happened and only its answer been lost (a database crash or restart, a cut
 * network). Then the request is not answered until that is known: the ids were made before the write, so
 * whether its rows are there is asked again, retrying until the database answers or the deadline passes;
 * rows there answer as stored (the quota and key kept), rows absent as the 503 they are. Past the deadline
 * the outcome is still unknown and the 503 says so (docs/api.md).
 */
export interface AcceptanceDeps {
  quota: Pick<QuotaRepo, 'reserve' | 'reserveWithKey' | 'release' | 'releaseKey' | 'used' | 'keyUsed'>;
  idempotency: Idempotency;
  now: () => Date;
  /** Told when undoing a failed send fails too (the database is likely down): the original error is what the caller gets. */
  onUndoFailed: (err: unknown, what: 'quota' | 'idempotency-key') => void;
  /** How many of `ids` are in `table`, once writers still at work on it are done (commit-probe.ts). */
  storedCount: (table: AcceptedTable, ids: string[]) => Promise<number>;
  /** Told while a lost commit's outcome is being found out, and what it was. */
  onCommitUnknown?: (event: { ids: string[]; outcome: 'stored' | 'absent' | 'unknown'; waitedMs: number }) => void;
  /** How long a lost commit's outcome is asked for (tests shorten it). */
  commitOutcomeDeadlineMs?: number;
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
  /**
   * Stores the emails (and the key's answer). Given `quota`, the same statement counts them against it, all
   * or nothing with the emails, and rejects with isQuotaRefused when it has no room.
   */
  store: (completion: IdempotencyCompletion | undefined, now: Date, quota?: QuotaCounter) => Promise<void>;
  /**
   * `store` counts the account's quota itself: one statement where reserving first made two (migration
   * 0037). A key with a daily_quota of its own is still reserved first, both counters in one transaction.
   */
  countsQuota?: boolean;
  /** The rows `store` writes, by the ids made up front: where to look when its answer is lost. */
  rows: { table: AcceptedTable; ids: string[] };
}

/** Past this, a lost commit's outcome is given up on: most HTTP clients wait 30 s or more for an answer. */
export const COMMIT_OUTCOME_DEADLINE_MS = 20_000;
/** The 503 of a write whose outcome is still unknown at the deadline: a retry without a key may send twice. */
const UNKNOWN_MESSAGE =
  'The database went away while the request was being stored and has not said whether it was; ' +
  'retry with the same Idempotency-Key';
/** The first wait between asks; it doubles up to the last. */
const FIRST_WAIT_MS = 100;
const LAST_WAIT_MS = 1_000;

export function createAcceptance(deps: AcceptanceDeps) {
  /**
   * Counts `n` emails against today's quota of the account and, when the key has one, of the key (both in one
   * transaction, all `n` or none: a batch is refused whole), or throws the 429 of the quota that refused.
   */
  async function reserveQuota(principal: Principal, n: number, now: Date): Promise<string> {
    const day = utcDay(now);
    const { keyId, keyDailyQuota } = principal;
    if (keyDailyQuota === undefined) {
      const used = await deps.quota.reserve(principal.accountId, day, n, principal.dailyQuota);
      if (used === undefined)
        throw quotaExceeded(await deps.quota.used(principal.accountId, day), principal.dailyQuota, now);
      return day;
    }
    const refused = await deps.quota.reserveWithKey(principal.accountId, keyId, day, n, {
      account: principal.dailyQuota,
      key: keyDailyQuota,
    });
    if (refused === 'key') throw keyQuotaExceeded(await deps.quota.keyUsed(keyId, day), keyDailyQuota, now);
    if (refused === 'account')
      throw quotaExceeded(await deps.quota.used(principal.accountId, day), principal.dailyQuota, now);
    return day;
  }

  async function releaseQuota(principal: Principal, day: string, n: number): Promise<void> {
    await deps.quota.release(principal.accountId, day, n);
    if (principal.keyDailyQuota !== undefined) await deps.quota.releaseKey(principal.keyId, day, n);
  }

  /**
   * Whether the rows of a write whose answer was lost are there: all of them (one statement wrote them, all
   * or nothing), none, or undefined if the database did not answer before the deadline.
   */
  async function lostCommitStored(rows: AcceptRequest<unknown>['rows']): Promise<boolean | undefined> {
    const started = Date.now();
    const deadline = started + (deps.commitOutcomeDeadlineMs ?? COMMIT_OUTCOME_DEADLINE_MS);
    let wait = FIRST_WAIT_MS;
    for (;;) {
      try {
        const stored = (await deps.storedCount(rows.table, rows.ids)) > 0;
        deps.onCommitUnknown?.({
          ids: rows.ids,
          outcome: stored ? 'stored' : 'absent',
          waitedMs: Date.now() - started,
        });
        return stored;
      } catch {
        // Still unreachable (or a writer held the table past the lock timeout): ask again.
        if (Date.now() + wait > deadline) {
          deps.onCommitUnknown?.({ ids: rows.ids, outcome: 'unknown', waitedMs: Date.now() - started });
          return undefined;
        }
        await new Promise((r) => setTimeout(r, wait));
        wait = Math.min(wait * 2, LAST_WAIT_MS);
      }
    }
  }

  return async function accept<T>(r: AcceptRequest<T>): Promise<T> {
    const begun = await deps.idempotency.begin<T>(r.principal.accountId, r.idempotencyKey, r.operation, r.request);
    if ('replay' in begun) return begun.replay;
    const now = deps.now();
    let day: string | undefined;
    // An email that may be stored keeps its quota: counting it once too often beats sending it uncounted.
    let mayBeStored = false;
    const { principal } = r;
    // Counted by the store's own statement: nothing to give back if it fails (it rolled back whole).
    const quota: QuotaCounter | undefined =
      r.countsQuota === true && principal.keyDailyQuota === undefined
        ? { accountId: principal.accountId, day: utcDay(now), n: r.count, limit: principal.dailyQuota }
        : undefined;
    try {
      if (!quota) day = await reserveQuota(principal, r.count, now);
      try {
        await r.store(begun.scope && { ...begun.scope, response: r.answer }, now, quota);
      } catch (err) {
        if (quota && isQuotaRefused(err))
          throw quotaExceeded(await deps.quota.used(quota.accountId, quota.day), quota.limit, now);
        if (!isCommitOutcomeUnknown(err)) throw err;
        const stored = await lostCommitStored(r.rows);
        if (stored === true) return r.answer;
        // Not there: nothing was accepted, the 503 is true. Unknown: the 503 says so.
        if (stored === false) throw err;
        mayBeStored = true;
        throw unavailable(UNKNOWN_MESSAGE, err);
      }
      return r.answer;
    } catch (err) {
      if (day !== undefined && !mayBeStored)
        await releaseQuota(r.principal, day, r.count).catch((e: unknown) => deps.onUndoFailed(e, 'quota'));
      await deps.idempotency.abandon(begun.scope).catch((e: unknown) => deps.onUndoFailed(e, 'idempotency-key'));
      throw err;
    }
  };
}
export type Accept = ReturnType<typeof createAcceptance>;
