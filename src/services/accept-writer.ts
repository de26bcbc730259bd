import { isCommitOutcomeUnknown } from '../db/db-unavailable.js';
import type { EmailsRepo } from '../db/index.js';
import type { NewEmail } from '../domain/entities/emails.js';
import { groupPerTurn, type Waiting } from '../group-commit.js';

/** Most emails in one statement (its parameters stay small; a draft may be 10 MB with its attachments). */
const MAX_BATCH = 100;

/** Stores one accepted email with its place in the delivery queue; resolves once it is committed. */
export type AcceptWriter = (email: NewEmail) => Promise<void>;

/**
 * Group commit (group-commit.ts) for accepted emails (POST /emails, SMTP submission), as outcome-writer.ts
 * does for delivery outcomes: the emails of the requests that reach their store in one turn of the event
 * loop are written by one statement at the end of that turn. Under load most of an accept's database time is the statement
 * around the row (its parse, the list counters' statement trigger, the commit), paid per statement
 * (docs/benchmark.md, "Where PostgreSQL's time goes"); one statement for many pays it once. Nobody waits for
 * a turn: a lone request is written as soon as it gets there. Every request is answered only after its own
 * email committed.
 *
 * A statement is all or nothing, and its emails belong to different requests, even different accounts: when
 * a grouped write fails, each email is written again on its own, so an email the database refuses fails its
 * own request and no other. Requests with an Idempotency-Key are not grouped (their answer is stored in the
 * same statement as their email: emails-repo.ts, idempotencyCte).
 *
 * A grouped write that lost its connection is not written again: it may have committed with only its answer
 * lost, and then each email would be written twice (refused as a duplicate id). Each request gets the
 * failure, and acceptance.ts finds out, by its id, whether its email is there.
 */
export function createAcceptWriter(emails: Pick<EmailsRepo, 'accept'>): AcceptWriter {
  const writeOne = (w: Waiting<NewEmail, void>) => emails.accept([w.item], { enqueue: true }).then(w.resolve, w.reject);
  return groupPerTurn<NewEmail, void>(MAX_BATCH, async (batch) => {
    if (batch.length === 1) return writeOne(batch[0]!);
    try {
      await emails.accept(
        batch.map((w) => w.item),
        { enqueue: true },
      );
    } catch (err) {
      if (isCommitOutcomeUnknown(err)) {
        for (const w of batch) w.reject(err);
        return;
      }
      await Promise.all(batch.map(writeOne));
      return;
    }
    for (const w of batch) w.resolve();
  });
}
