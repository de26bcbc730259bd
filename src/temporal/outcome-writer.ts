import { outcomeKey, type LeasedOutcome } from '../db/repos/delivery-outcomes.js';
import { groupPerTurn } from '../group-commit.js';

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
 * duplicate-window test). Every caller is answered only after its own outcome committed; a failed write
 * fails every outcome in it.
 */
export function createOutcomeWriter(write: (entries: LeasedOutcome[]) => Promise<Map<string, string>>): OutcomeWriter {
  const record = groupPerTurn<LeasedOutcome, { accountId: string } | undefined>(MAX_BATCH, async (batch) => {
    try {
      const recorded = await write(batch.map((w) => w.item));
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
