/**
 * Secrets kept in the database are sealed (secrets/key-box.ts) for one context: which column of which row holds
 * them. The context is authenticated with the value (AES-GCM additional data) and is not stored in it, so a
 * sealed value copied into another row, another column or another setting fails to open instead of yielding
 * one row's secret as another's. Repositories take a SecretBox and seal what they write, open what they read.
 */
export interface SecretBox {
  /** `plain` sealed for `context` only. */
  seal(plain: string, context: string): string;
  /** The value sealed for `context`; throws (never echoing it) when it was sealed for another, altered, or is not sealed. */
  open(sealed: string, context: string): string;
  /** Whether a stored value is in a sealed form bound to its context (values written before binding are not). */
  isBound(stored: string): boolean;
}

/** The context of each kind of sealed value: table, column, and the row's key. */
export const sealedContext = {
  /** A DKIM key's private key (dkim_keys.private_key_sealed). */
  dkimPrivateKey: (keyId: string) => `dkim_keys.private_key_sealed/${keyId}`,
  /**
   * A webhook's signing secrets: its current one and, during a rotation's overlap, its previous one. One context
   * for both columns: a rotation moves the current secret into previous_secret in SQL, which cannot re-seal.
   */
  webhookSecret: (webhookId: string) => `webhooks.secret/${webhookId}`,
  /** A service-wide secret in the settings table, by its name. */
  setting: (name: string) => `settings.value/${name}`,
} as const;
