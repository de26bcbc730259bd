import { createPrivateKey, type KeyObject } from 'node:crypto';
import type { DkimSigningKey } from './dkim-keyring.js';

/**
 * The signing key parsed once. Signing with a PEM string makes OpenSSL decode the key on every message,
 * which costs more than the RSA signature itself (docs/benchmark.md, "Figures behind the code's choices").
 * The keyring hands out one DkimSigningKey object per domain for its TTL, so a WeakMap on it parses
 * each key once per TTL and forgets it with the keyring's entry.
 */
const parsed = new WeakMap<DkimSigningKey, KeyObject | string>();

export function parsedPrivateKey(key: DkimSigningKey): KeyObject | string {
  let found = parsed.get(key);
  if (found === undefined) {
    try {
      found = createPrivateKey(key.privateKey);
    } catch {
      // Not a key OpenSSL reads: nodemailer gets the text and fails on it as it always has.
      found = key.privateKey;
    }
    parsed.set(key, found);
  }
  return found;
}
