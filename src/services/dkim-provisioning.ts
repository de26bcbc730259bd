import { AppError } from '../errors.js';
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

/**
 * Key pairs made at once per process, and how many more may wait. An RSA-2048 pair takes tens of milliseconds of
 * a libuv pool thread; DNS lookups and file reads share that small pool (4 threads), so keys made for a flood of
 * domain additions (accounts add their own now: a key at its rate limit adding and deleting in a loop) must not
 * take all of it. Past the waiting line, an addition is answered 429 to be retried.
 */
export const KEYGEN_AT_ONCE = 1;
export const KEYGEN_WAITING = 16;
const KEYGEN_RETRY_AFTER_SECONDS = 2;

/** `generate` run at most `atOnce` at a time, with at most `waiting` calls queued; the next one is refused. */
export function gated<T>(generate: () => Promise<T>, atOnce: number, waiting: number): () => Promise<T> {
  let running = 0;
  const queue: (() => void)[] = [];
  return async () => {
    if (running >= atOnce) {
      if (queue.length >= waiting)
        throw new AppError('rate_limited', 'DKIM keys are being made for many domains at once: try again shortly', {
          retryAfterSeconds: KEYGEN_RETRY_AFTER_SECONDS,
        });
      await new Promise<void>((resolve) => queue.push(resolve));
    } else running++;
    try {
      return await generate();
    } finally {
      // The slot passes straight to the next in line, so `running` never drops below what is in use.
      const next = queue.shift();
      if (next) next();
      else running--;
    }
  };
}

/** Making a domain's DKIM keys: when it is added, when it rotates, and for domains added before keys existed. */
export function createDkimProvisioning(deps: DkimProvisioningDeps) {
  const generate = gated(deps.generate, KEYGEN_AT_ONCE, KEYGEN_WAITING);
  /**
   * A new key for the domain under a dated selector it has not used. Undefined when the domain already has
   * a key of that status (another process, or request, made it first).
   */
  async function addKey(domainId: string, status: 'active' | 'pending'): Promise<DkimKeyRow | undefined> {
    const pair = await generate();
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
