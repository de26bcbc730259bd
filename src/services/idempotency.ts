import type { IdempotencyRepo } from '../db/index.js';
import { IDEMPOTENCY_TTL_HOURS } from '../domain/limits.js';
import { AppError, invalid } from '../errors.js';
import { sha256 } from './secrets.js';

/**
 * Idempotency-Key semantics (CONTRACT.md): the same key with the same request within 24 hours answers the
 * first answer again and sends nothing twice; the same key with another request is a 400. A second request
 * arriving while the first is still being answered gets a 409 and may retry.
 */
export const KEY_SHAPE = /^[\x21-\x7e]{1,256}$/;
/** A reservation whose request never completed (its process died) is taken over after this. */
const STALE_SECONDS = 60;

export interface IdempotencyScope {
  accountId: string;
  key: string;
  operation: string;
  requestHash: Buffer;
}

export type Begin<T> = { replay: T } | { scope: IdempotencyScope | undefined };

export function createIdempotency(repo: IdempotencyRepo) {
  return {
    /** Validates the key, then either answers a replay or reserves the key for this request. */
    async begin<T>(accountId: string, key: string | undefined, operation: string, request: unknown): Promise<Begin<T>> {
      if (key === undefined) return { scope: undefined };
      if (!KEY_SHAPE.test(key)) throw invalid('Idempotency-Key must be 1 to 256 printable ASCII characters');
      const scope = { accountId, key, operation, requestHash: hashRequest(operation, request) };
      const r = await repo.reserve({ ...scope, ttlHours: IDEMPOTENCY_TTL_HOURS, staleSeconds: STALE_SECONDS });
      if (r.state === 'reserved') return { scope };
      if (r.operation !== operation || !r.requestHash.equals(scope.requestHash)) {
        throw invalid('Idempotency-Key was already used with a different request body');
      }
      if (r.state === 'in_progress') {
        throw new AppError('conflict', 'A request with this Idempotency-Key is still being processed; retry shortly', {
          retryAfterSeconds: 1,
        });
      }
      return { replay: r.response as T };
    },

    /** Gives the key back when the request failed, so a corrected retry is answered afresh. */
    async abandon(scope: IdempotencyScope | undefined): Promise<void> {
      if (scope) await repo.release(scope.accountId, scope.key);
    },
  };
}
export type Idempotency = ReturnType<typeof createIdempotency>;

/** A digest of the request as the service understood it (binary content included). */
function hashRequest(operation: string, request: unknown): Buffer {
  return sha256(`${operation}\n${JSON.stringify(request)}`);
}
