import type { KeyPrincipalRow } from '../domain/entities/api-keys.js';
import { groupPerTurn } from '../group-commit.js';

/** Most keys looked up by one statement. */
const MAX_BATCH = 256;

/**
 * The key of each request read afresh, as auth-service.ts wants (a deleted key or a banned account counts
 * from the next request on), with the lookups of one turn of the event loop made by one statement
 * (group-commit.ts): under load every request's lookup was a statement and a round trip of its own, one of
 * three per send (docs/benchmark.md, "Session 18"). Each request's key is read by a statement that started
 * after the request arrived, as before; a statement that fails fails every lookup in it.
 */
export function groupedPrincipalLookup(
  findPrincipals: (keyHashes: Buffer[]) => Promise<KeyPrincipalRow[]>,
): (keyHash: Buffer) => Promise<KeyPrincipalRow | undefined> {
  return groupPerTurn<Buffer, KeyPrincipalRow | undefined>(MAX_BATCH, async (batch) => {
    const wanted = new Map(batch.map((w) => [w.item.toString('hex'), w.item]));
    let rows: KeyPrincipalRow[];
    try {
      rows = await findPrincipals([...wanted.values()]);
    } catch (err) {
      for (const w of batch) w.reject(err);
      return;
    }
    const found = new Map(rows.map((r) => [r.keyHash.toString('hex'), r]));
    for (const w of batch) w.resolve(found.get(w.item.toString('hex')));
  });
}
