import type { UsageDelta } from '../domain/entities/api-keys.js';

/**
 * Per-key usage statistics (requests, errors, emails sent), counted in memory and added to the database
 * once a second: a counter row written by every request would serialise a key's requests. A crash may
 * lose up to a second of statistics, never an email.
 */
export function createUsageRecorder(write: (deltas: UsageDelta[]) => Promise<void>, onError: (err: unknown) => void) {
  let pending = new Map<string, UsageDelta>();
  const entry = (keyId: string) => {
    let d = pending.get(keyId);
    if (!d) pending.set(keyId, (d = { keyId, requests: 0, errors: 0, emailsSent: 0 }));
    return d;
  };

  // Flushes run one after another, and each waits for the one before: a caller of flush() (the key
  // listing) must see what an earlier flush (the timer's) is still writing.
  let writing: Promise<void> = Promise.resolve();
  function flush(): Promise<void> {
    writing = writing.then(async () => {
      if (pending.size === 0) return;
      const deltas = [...pending.values()];
      pending = new Map();
      try {
        await write(deltas);
      } catch (err) {
        onError(err);
      }
    });
    return writing;
  }

  const timer = setInterval(() => void flush(), 1000);
  timer.unref();

  return {
    request(keyId: string, failed: boolean): void {
      const d = entry(keyId);
      d.requests += 1;
      if (failed) d.errors += 1;
    },
    emailsSent(keyId: string, n: number): void {
      entry(keyId).emailsSent += n;
    },
    flush,
    async close(): Promise<void> {
      clearInterval(timer);
      await flush();
    },
  };
}
export type UsageRecorder = ReturnType<typeof createUsageRecorder>;
