import { describe, expect, it } from 'vitest';
import type { KeyPrincipalRow } from '../../src/domain/entities/api-keys.js';
import { groupedPrincipalLookup } from '../../src/services/principal-lookup.js';

const turn = () => new Promise((r) => setImmediate(r));
const hash = (n: number) => Buffer.alloc(32, n);
const row = (n: number) => ({ keyId: `key_${n}`, keyHash: hash(n) }) as KeyPrincipalRow;

/** The repository seam: keys 1 and 2 exist; records each statement's hashes. */
function fakeKeys(fail = false) {
  const calls: number[][] = [];
  return {
    calls,
    async findPrincipals(hashes: Buffer[]): Promise<KeyPrincipalRow[]> {
      calls.push(hashes.map((h) => h[0]!));
      await turn();
      if (fail) throw new Error('database unavailable');
      return hashes.filter((h) => h[0] === 1 || h[0] === 2).map((h) => row(h[0]!));
    },
  };
}

describe('grouped key lookups', () => {
  it("reads the keys of one turn's requests by one statement, each once; each request gets its own key or none; the next turn reads again", async () => {
    const repo = fakeKeys();
    const find = groupedPrincipalLookup(repo.findPrincipals);
    const found = await Promise.all([find(hash(1)), find(hash(2)), find(hash(1)), find(hash(3))]);
    expect(found.map((r) => r?.keyId)).toEqual(['key_1', 'key_2', 'key_1', undefined]);
    expect(repo.calls).toEqual([[1, 2, 3]]);
    expect((await find(hash(2)))?.keyId).toBe('key_2');
    expect(repo.calls).toEqual([[1, 2, 3], [2]]);
  });

  it('a statement that fails fails every lookup in it', async () => {
    const find = groupedPrincipalLookup(fakeKeys(true).findPrincipals);
    const settled = await Promise.allSettled([find(hash(1)), find(hash(2))]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
  });
});
