import { isCommitOutcomeUnknown } from '../db/db-unavailable.js';
import type { EmailsRepo } from '../db/index.js';
import { isClaimRefused, type PrincipalClaim } from '../db/repos/principal-claims.js';
import { isQuotaRefused, type QuotaCounter } from '../db/repos/quota-repo.js';
import type { NewEmail } from '../domain/entities/emails.js';
import { groupPerTurn, type Waiting } from '../group-commit.js';

/** Most emails in one statement (its parameters stay small; a draft may be 10 MB with its attachments). */
const MAX_BATCH = 100;

/**
 * An accepted email, the daily quota it is counted against in the statement that stores it, and the cached
 * key it was accepted on, which that statement confirms (auth-service.ts, authenticateCached).
 */
export interface CountedEmail {
  email: NewEmail;
  quota?: QuotaCounter;
  claim?: PrincipalClaim;
}

/**
 * Stores one accepted email with its place in the delivery queue (and its count against `quota`); resolves once
 * it is committed. A quota without room rejects with the database's error (isQuotaRefused) and stores nothing,
 * as does a claimed key that is gone or changed (isClaimRefused).
 */
export type AcceptWriter = (accepted: CountedEmail) => Promise<void>;

/**
 * Group commit (group-commit.ts) for accepted emails (POST /emails, SMTP submission), as outcome-writer.ts
 * does for delivery outcomes: the emails of the requests that reach their store in one turn of the event
 * loop are written by one statement at the end of that turn, their quota counted by it too, summed per
 * account and day (emails-repo.ts accept, migration 0037). Under load most of an accept's database time is
 * the statement around the row (its parse, the list counters' statement trigger, the commit), paid per
 * statement (docs/benchmark.md, "Where PostgreSQL's time goes"); one statement for many pays it once. Nobody
 * waits for a turn: a lone request is written as soon as it gets there. Every request is answered only after
 * its own email committed.
 *
 * A statement is all or nothing, and its emails belong to different requests, even different accounts: when
 * a grouped write fails, each email is written again on its own, so an email the database refuses fails its
 * own request and no other. When the group's sum did not fit a quota, they are written again in the order
 * they came, so each is admitted exactly as it would have been alone (the last ones of a day near its limit
 * refused, the earlier ones kept). Requests with an Idempotency-Key are not grouped (their answer is stored in
 * the same statement as their email: emails-repo.ts, idempotencyCte).
 *
 * A grouped write that lost its connection is not written again: it may have committed with only its answer
 * lost, and then each email would be written twice (refused as a duplicate id). Each request gets the
 * failure, and acceptance.ts finds out, by its id, whether its email is there.
 */
export function createAcceptWriter(emails: Pick<EmailsRepo, 'accept'>): AcceptWriter {
  const writeOne = ({ item, resolve, reject }: Waiting<CountedEmail, void>) =>
    emails
      .accept([item.email], {
        enqueue: true,
        ...(item.quota ? { quota: [item.quota] } : {}),
        ...(item.claim ? { claims: [item.claim] } : {}),
      })
      .then(resolve, reject);
  return groupPerTurn<CountedEmail, void>(MAX_BATCH, async (batch) => {
    if (batch.length === 1) return writeOne(batch[0]!);
    const quota = summed(batch.map((w) => w.item.quota));
    const claims = batch.flatMap((w) => (w.item.claim ? [w.item.claim] : []));
    try {
      await emails.accept(
        batch.map((w) => w.item.email),
        { enqueue: true, ...(quota.length > 0 ? { quota } : {}), ...(claims.length > 0 ? { claims } : {}) },
      );
    } catch (err) {
      if (isCommitOutcomeUnknown(err)) {
        for (const w of batch) w.reject(err);
        return;
      }
      // In order, so that a quota near its limit admits the earlier ones; a refused claim fails its own email.
      if (isQuotaRefused(err) || isClaimRefused(err)) for (const w of batch) await writeOne(w);
      else await Promise.all(batch.map(writeOne));
      return;
    }
    for (const w of batch) w.resolve();
  });
}

/**
 * One counter per account and day (a statement changes a counter row once), its `n` the sum of the group's.
 * Should the limit differ within a turn (the quota changed meanwhile), the lower one is asked: a sum refused
 * by it is tried again one email at a time, each against its own.
 */
function summed(quotas: (QuotaCounter | undefined)[]): QuotaCounter[] {
  const byCounter = new Map<string, QuotaCounter>();
  for (const q of quotas) {
    if (!q) continue;
    const key = `${q.accountId} ${q.day}`;
    const had = byCounter.get(key);
    byCounter.set(key, had ? { ...had, n: had.n + q.n, limit: Math.min(had.limit, q.limit) } : { ...q });
  }
  return [...byCounter.values()];
}
