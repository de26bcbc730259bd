import type { Repos } from '../db/index.js';
import { sealedContext } from '../domain/sealed-values.js';
import type { KeyBox } from '../secrets/key-box.js';
import type { Logger } from '../logger.js';

/** The settings row that records which encryption key the installation's sealed values are under. */
export const ENCRYPTION_KEY_FINGERPRINT = 'encryption_key_fingerprint';

/**
 * Refuses to start a process whose encryption key is not the installation's: processes that each generated a
 * key into their own data dir would otherwise start and then fail every send that opens a sealed value. The
 * first process to get here records its key's fingerprint (the key id of key-box.ts: a hash, not the key);
 * every later one must match it. A database from before the fingerprint has none: its DKIM keys say which key
 * sealed them, so that is checked first, and a process with another key never records its own.
 */
export async function assertInstallationKey(
  repos: Pick<Repos, 'dkimKeys' | 'settings'>,
  keyBox: Pick<KeyBox, 'keyId'>,
): Promise<void> {
  const foreign = (await repos.dkimKeys.sealingKeyIds()).filter((id) => id !== keyBox.keyId);
  if (foreign.length > 0) {
    throw new Error(
      `the DKIM keys in the database are sealed under another encryption key (id ${foreign.join(', ')}; this process has ${keyBox.keyId}): ` +
        "give every process the same MAILER_ENCRYPTION_KEY (or the data dir's encryption-key file that sealed them)",
    );
  }
  const recorded = await repos.settings.getOrCreate(ENCRYPTION_KEY_FINGERPRINT, keyBox.keyId);
  if (recorded !== keyBox.keyId) {
    throw new Error(
      `this process's encryption key (id ${keyBox.keyId}) is not the one this installation's database records (id ${recorded}): ` +
        'every process of an installation must use the same key; set the same MAILER_ENCRYPTION_KEY for each ' +
        "(or give each the data dir's encryption-key file of the first process) and start it again",
    );
  }
}

/**
 * Seals what an older version stored in clear (webhook secrets) or sealed without binding it to its row (DKIM
 * keys), before anything reads them. SQL cannot seal, so this runs at every start rather than in a migration;
 * it finds nothing to do once every row is sealed. Every process of an installation must run this version:
 * an older one would read the sealed values as if they were clear.
 */
export async function sealStoredSecrets(
  repos: Pick<Repos, 'dkimKeys' | 'webhooks'>,
  keyBox: KeyBox,
  logger: Logger,
): Promise<void> {
  const webhooks = await repos.webhooks.sealClearSecrets();
  let dkimKeys = 0;
  for (const { id, sealed } of await repos.dkimKeys.unboundPrivateKeys()) {
    const context = sealedContext.dkimPrivateKey(id);
    await repos.dkimKeys.replaceSealed(id, sealed, keyBox.seal(keyBox.openAllowingUnbound(sealed, context), context));
    dkimKeys += 1;
  }
  if (webhooks + dkimKeys > 0)
    logger.info(
      { webhooks, dkimKeys },
      'sealed the secrets an earlier version stored in clear or unbound to their row',
    );
}
