import { inspect } from 'node:util';
import { asciiDomain } from '../../domain/domain-name.js';
import { sealedContext } from '../../domain/sealed-values.js';
import type { KeyBox } from '../../secrets/key-box.js';

/** What nodemailer's `dkim` option takes to sign a message. */
export interface DkimSigningKey {
  domainName: string;
  keySelector: string;
  /** PKCS#8 PEM. Never logged: the object prints and serialises without it. */
  privateKey: string;
}

export interface DkimKeyring {
  /** The active key of the account's domain `domainName` (the From domain), or undefined when it has none. */
  signingKey(accountId: string, domainName: string): Promise<DkimSigningKey | undefined>;
}

export interface DkimKeyringDeps {
  /** The active key, sealed (dkim-keys-repo.ts sealedSigningKey). */
  lookup: (
    accountId: string,
    domainName: string,
  ) => Promise<{ domainName: string; keyId: string; selector: string; sealed: string } | undefined>;
  keyBox: Pick<KeyBox, 'openAllowingUnbound'>;
  ttlMs?: number;
  maxEntries?: number;
  now?: () => number;
}

/** A rotated key starts signing within this long in every process. */
export const KEYRING_TTL_MS = 60_000;
const KEYRING_MAX_ENTRIES = 1_000;

/** A key object that keeps its private key out of logs (pino, console.log, JSON.stringify) yet spreads whole. */
function signingKey(domainName: string, keySelector: string, privateKey: string): DkimSigningKey {
  const key = { domainName, keySelector, privateKey };
  const shown = { domainName, keySelector, privateKey: '[redacted]' };
  Object.defineProperty(key, 'toJSON', { value: () => shown, enumerable: false });
  Object.defineProperty(key, inspect.custom, { value: () => shown, enumerable: false });
  return key;
}

/**
 * The send path's DKIM keys, opened once and kept for a minute (a send should not cost a query and an
 * AES-GCM open): bounded, and a concurrent burst for one domain shares one lookup. A domain without a key is
 * remembered as such for the same minute.
 */
export function createDkimKeyring(deps: DkimKeyringDeps): DkimKeyring {
  const ttlMs = deps.ttlMs ?? KEYRING_TTL_MS;
  const maxEntries = deps.maxEntries ?? KEYRING_MAX_ENTRIES;
  const now = deps.now ?? Date.now;
  const cache = new Map<string, { expires: number; key: Promise<DkimSigningKey | undefined> }>();

  async function load(accountId: string, domainName: string): Promise<DkimSigningKey | undefined> {
    const found = await deps.lookup(accountId, domainName);
    if (!found) return undefined;
    let pem: string;
    try {
      // Sealed for its own row; keys sealed before rows were bound still open (the start re-seals them).
      pem = deps.keyBox.openAllowingUnbound(found.sealed, sealedContext.dkimPrivateKey(found.keyId));
    } catch (err) {
      // The key box's messages name no secret; this adds which domain's key it was.
      throw new Error(
        `the DKIM key of ${found.domainName} (selector ${found.selector}) cannot be opened: ${(err as Error).message}`,
        { cause: err },
      );
    }
    return signingKey(found.domainName, found.selector, pem);
  }

  return {
    signingKey(accountId, domainName) {
      const name = asciiDomain(domainName);
      if (name === undefined) return Promise.resolve(undefined);
      const cacheKey = `${accountId}\n${name}`;
      const hit = cache.get(cacheKey);
      if (hit && hit.expires > now()) return hit.key;
      if (hit) cache.delete(cacheKey);
      // Map order is insertion order: the oldest entry goes first.
      while (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
      const key = load(accountId, name);
      cache.set(cacheKey, { expires: now() + ttlMs, key });
      // A failure is not remembered: the next send asks again.
      key.catch(() => {
        if (cache.get(cacheKey)?.key === key) cache.delete(cacheKey);
      });
      return key;
    },
  };
}
