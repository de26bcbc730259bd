import { sealedContext } from '../../src/domain/sealed-values.js';
import { loadEncryptionKey } from '../../src/secrets/encryption-key.js';
import { createKeyBox, type KeyBox } from '../../src/secrets/key-box.js';
import type { Mailer } from '../../src/main.js';

/** The key box of a running mailer: its configured encryption key, or the one in its data dir. */
export async function keyBoxOf(mailer: Pick<Mailer, 'config'>): Promise<KeyBox> {
  return createKeyBox((await loadEncryptionKey(mailer.config.encryptionKey, mailer.config.dataDir)).key);
}

/** The service's tracking key (tracking links and report tokens), as stored in its settings table, opened. */
export async function trackingKeyOf(mailer: Pick<Mailer, 'config' | 'sql'>): Promise<string> {
  const [row] = await mailer.sql<{ value: string }[]>`select value from settings where name = 'tracking_key'`;
  return (await keyBoxOf(mailer)).open(row!.value, sealedContext.setting('tracking_key'));
}
