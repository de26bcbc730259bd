/** The version of a template a send renders. */
export interface PinnedVersion {
  id: string;
  version: number;
}

/**
 * Which version each template a send names renders, remembered per API process (issue 24: a templated send may
 * cost at most 10 % more than a plain one, and asking PostgreSQL on every send was half of the difference).
 * Only found versions are kept (a miss asks again), by account and by what the send named (`<id or alias>@<version>`).
 *
 * An entry is forgotten when its account's templates change: at once for a change made by this process, and by
 * the `mail_templates` NOTIFY (migration 24's trigger) for one made by any other, which arrives when that change
 * commits. Until the LISTEN is in place nothing is kept, and every (re)connection of it forgets everything, since
 * notifications sent meanwhile were lost. An entry also expires after `ttlMs` whatever happens, which bounds how
 * long a lost notification could keep one.
 */
export class PinnedVersions {
  private readonly byAccount = new Map<string, Map<string, { pinned: PinnedVersion; until: number }>>();
  private size = 0;
  private listening = false;

  constructor(
    private readonly now: () => number = Date.now,
    readonly ttlMs = 10_000,
    readonly maxEntries = 10_000,
  ) {}

  get(accountId: string, key: string): PinnedVersion | undefined {
    const entry = this.byAccount.get(accountId)?.get(key);
    if (entry === undefined) return undefined;
    if (entry.until > this.now()) return entry.pinned;
    this.drop(accountId, key);
    return undefined;
  }

  set(accountId: string, key: string, pinned: PinnedVersion): void {
    if (!this.listening) return;
    if (this.size >= this.maxEntries) this.forgetAll();
    let entries = this.byAccount.get(accountId);
    if (entries === undefined) this.byAccount.set(accountId, (entries = new Map()));
    if (!entries.has(key)) this.size++;
    entries.set(key, { pinned, until: this.now() + this.ttlMs });
  }

  /** The account's templates changed (a publish, an edit, a delete). */
  forgetAccount(accountId: string): void {
    this.size -= this.byAccount.get(accountId)?.size ?? 0;
    this.byAccount.delete(accountId);
  }

  forgetAll(): void {
    this.byAccount.clear();
    this.size = 0;
  }

  /** The LISTEN is (again) in place: start keeping entries, from nothing. */
  listenStarted(): void {
    this.forgetAll();
    this.listening = true;
  }

  /** Notifications may be missed from now on (the listener stops): keep nothing. */
  listenStopped(): void {
    this.listening = false;
    this.forgetAll();
  }

  get entries(): number {
    return this.size;
  }

  private drop(accountId: string, key: string): void {
    const entries = this.byAccount.get(accountId);
    if (entries?.delete(key)) this.size--;
    if (entries?.size === 0) this.byAccount.delete(accountId);
  }
}
