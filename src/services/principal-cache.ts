import type { KeyPrincipalRow } from '../domain/entities/api-keys.js';

/** Keys remembered at most (a process serving more keys than this reads the rest afresh). */
const MAX_KEYS = 10_000;
/** A key not read afresh for this long is read afresh again: a claim refused costs a statement and a retry. */
const TTL_MS = 60_000;

/**
 * The keys this process read lately, by their SHA-256 (hex), for authenticateCached (auth-service.ts): only
 * rows that passed every check when they were read. Nothing here is trusted on its own: each use is a claim the
 * statement storing the send confirms. Bounded in size and age; the oldest read goes first.
 */
export function createPrincipalCache(now: () => number = Date.now, maxKeys = MAX_KEYS, ttlMs = TTL_MS) {
  const rows = new Map<string, { row: KeyPrincipalRow; readAt: number }>();
  return {
    get(hash: Buffer): KeyPrincipalRow | undefined {
      const id = hash.toString('hex');
      const hit = rows.get(id);
      if (hit === undefined) return undefined;
      if (now() - hit.readAt < ttlMs) return hit.row;
      rows.delete(id);
      return undefined;
    },
    /** Remembers a row just read and checked; re-reading a key makes it the newest. */
    set(row: KeyPrincipalRow): void {
      const id = row.keyHash.toString('hex');
      rows.delete(id);
      rows.set(id, { row, readAt: now() });
      if (rows.size > maxKeys) rows.delete(rows.keys().next().value!);
    },
    forget(hash: Buffer): void {
      rows.delete(hash.toString('hex'));
    },
    get size(): number {
      return rows.size;
    },
  };
}
export type PrincipalCache = ReturnType<typeof createPrincipalCache>;
