/** A console sign-in (migration 30's console_sessions), found by the SHA-256 of its cookie's token. */
export interface ConsoleSessionRow {
  /** The key the session acts as; null for the operator's session (signed in with the admin token). */
  apiKeyId: string | null;
  /** That key's stored hash, by which the request is authenticated as the key is; null for the operator. */
  keyHash: Buffer | null;
  /** What every request the cookie authenticates must carry in X-CSRF-Token. */
  csrfToken: string;
  expiresAt: Date;
}
