import { isDatabaseUnavailable } from '../../db/db-unavailable.js';
import { outcomeKey } from '../../db/index.js';
import type { LeasedOutcome } from '../../domain/entities/delivery.js';
import { groupPerTurn } from '../../group-commit.js';

/** Most outcomes in one statement (its JSON parameters stay small). */
const MAX_BATCH = 256;

export interface OutcomeWriter {
  /** Records one outcome; resolves once committed, with the email's account (undefined: the lease was lost). */
  record(entry: LeasedOutcome): Promise<{ accountId: string } | undefined>;
}

/**
 * Group commit for delivery outcomes (group-commit.ts): the outcomes recorded in one turn of the event loop (the SMTP answers
 * read in one poll, under load many) are written by one statement, at the end of that turn. No outcome
 * waits for an earlier write to finish: the window between a server's 250 and its commit stays one round
 * trip, as with a statement per email, which is what bounds the duplicates a crash can cause (RFC 1047; the
 * duplicate-window test). Every caller is answered only after its own outcome committed; a write the
 * database refused fails every outcome in it.
 *
 * A write that could not reach the database (down, restarting, the connection lost) is tried again, with
 * backoff, until it answers, however long that takes: an outcome is known only here (the receiving server
 * has the message), and letting it go would leave the email pending, its lease would lapse and the next
 * attempt would send it again (test/integration/database-restart.test.ts counts the copies). Meanwhile
 * the delivery activity stays alive and keeps heartbeating (pool.ts waits for its lanes), so no other attempt
 * starts, and its renewal extends the lease as soon as the database answers. A write whose answer was lost
 * after it committed is harmless to repeat: the lease it matched on is cleared, so it matches nothing.
 */
export function createOutcomeWriter(
  write: (entries: LeasedOutcome[]) => Promise<Map<string, string>>,
  options: { onRetry?: (err: unknown, attempt: number) => void; firstWaitMs?: number; lastWaitMs?: number } = {},
): OutcomeWriter {
  const firstWait = options.firstWaitMs ?? 100;
  const lastWait = options.lastWaitMs ?? 2_000;
  async function writeUntilAnswered(entries: LeasedOutcome[]): Promise<Map<string, string>> {
    let wait = firstWait;
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await write(entries);
      } catch (err) {
        if (!isDatabaseUnavailable(err)) throw err;
        options.onRetry?.(err, attempt);
        await new Promise((r) => setTimeout(r, wait));
        wait = Math.min(wait * 2, lastWait);
      }
    }
  }
  const record = groupPerTurn<LeasedOutcome, { accountId: string } | undefined>(MAX_BATCH, async (batch) => {
    try {
      const recorded = await writeUntilAnswered(batch.map((w) => w.item));
      for (const w of batch) {
        const accountId = recorded.get(outcomeKey(w.item.token, w.item.outcome.id));
        w.resolve(accountId === undefined ? undefined : { accountId });
      }
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  });
  return { record };
}
