import type { DkimKeyRow } from '../domain/entities/dkim-keys.js';
import type { DkimKeysRepo } from '../db/index.js';
import { dkimSelector } from '../domain/dns-records.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import type { DkimKeyPair } from '../delivery/dkim/dkim-key.js';

export interface DkimProvisioningDeps {
  dkimKeys: Pick<DkimKeysRepo, 'insert' | 'selectors' | 'domainsWithoutKey'>;
  generate: () => Promise<DkimKeyPair>;
  /** Seals the private key for the key row `keyId` (key-box.ts): only the sealed form is stored. */
  seal: (privateKeyPem: string, keyId: string) => string;
  now: () => Date;
  logger: Logger;
}

/** How many domains a pass of the backfill takes at once. */
const BACKFILL_PAGE = 50;

/** Making a domain's DKIM keys: when it is added, when it rotates, and for domains added before keys existed. */
export function createDkimProvisioning(deps: DkimProvisioningDeps) {
  /**
   * A new key for the domain under a dated selector it has not used. Undefined when the domain already has
   * a key of that status (another process, or request, made it first).
   */
  async function addKey(domainId: string, status: 'active' | 'pending'): Promise<DkimKeyRow | undefined> {
    const pair = await deps.generate();
    // Sealed for its own row: the id is made first.
    const id = newId('dkimKey');
    const privateKeySealed = deps.seal(pair.privateKeyPem, id);
    // A second try covers a selector taken between reading the selectors and inserting.
    for (let attempt = 0; attempt < 2; attempt++) {
      const selector = dkimSelector(deps.now(), await deps.dkimKeys.selectors(domainId));
      const row = await deps.dkimKeys.insert({
        id,
        domainId,
        selector,
        publicKey: pair.publicKey,
        privateKeySealed,
        status,
      });
      if (row) return row;
    }
    return undefined;
  }

  return {
    addKey,

    /**
     * An active key for every domain that has none (rows from before keys existed, the seeded default
     * domain). Safe to run in every process at once: one active key per domain is a unique index, so a key
     * made by two processes is stored once. Answers how many keys this process added.
     */
    async backfill(): Promise<number> {
      let added = 0;
      const tried = new Set<string>();
      for (;;) {
        const page = (await deps.dkimKeys.domainsWithoutKey(BACKFILL_PAGE)).filter((d) => !tried.has(d.id));
        if (page.length === 0) return added;
        for (const domain of page) {
          tried.add(domain.id);
          if (await addKey(domain.id, 'active')) {
            added++;
            deps.logger.info(
              { domain: domain.name },
              "made a DKIM key for a domain that had none: publish its record (see the domain's dns_records)",
            );
          }
        }
      }
    },
  };
}
export type DkimProvisioning = ReturnType<typeof createDkimProvisioning>;
