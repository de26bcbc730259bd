import { outcomeKey, type LeasedOutcome } from '../db/repos/delivery-outcomes.js';

/** Most outcomes in one statement (its JSON parameters stay small). */
const MAX_BATCH = 256;

export interface OutcomeWriter {
  /** Records one outcome; resolves once committed, with the email's account (undefined: the lease was lost). */
  record(entry: LeasedOutcome): Promise<{ accountId: string } | undefined>;
}

/**
 * Group commit for delivery outcomes: an outcome is written at once when no write is in flight, and the
 * outcomes that arrive while one is form the next write, one statement for all of them. A lone outcome
 * waits for nothing (so the window between a server's 250 and its commit stays one round trip, as with a
 * statement per email), while under load the statements per email fall with the load. Every caller is
 * answered only after its own outcome committed; a failed write fails every outcome in it.
 */
export function createOutcomeWriter(write: (entries: LeasedOutcome[]) => Promise<Map<string, string>>): OutcomeWriter {
  type Waiting = { entry: LeasedOutcome; resolve: (r: { accountId: string } | undefined) => void; reject: (err: unknown) => void };
  let queue: Waiting[] = [];
  let writing = false;

  async function flush(): Promise<void> {
    writing = true;
    while (queue.length > 0) {
      const batch = queue.slice(0, MAX_BATCH);
      queue = queue.slice(batch.length);
      try {
        const recorded = await write(batch.map((w) => w.entry));
        for (const w of batch) {
          const accountId = recorded.get(outcomeKey(w.entry.token, w.entry.outcome.id));
          w.resolve(accountId === undefined ? undefined : { accountId });
        }
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
    writing = false;
  }

  return {
    record(entry) {
      return new Promise((resolve, reject) => {
        queue.push({ entry, resolve, reject });
        if (!writing) void flush();
      });
    },
  };
}
