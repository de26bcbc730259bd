import { isCommitOutcomeUnknown } from '../db/db-unavailable.js';
import type { QuotaRepo } from '../db/index.js';
import type { QuotaCounter } from '../db/repos/quota-repo.js';
import { groupPerTurn, type Waiting } from '../group-commit.js';

/** Most reservations summed into one statement. */
const MAX_BATCH = 256;

type Reserve = QuotaRepo['reserve'];
type Pending = Waiting<QuotaCounter, number | undefined>;

/**
 * Group commit (group-commit.ts) for the daily quota, as accept-writer.ts does for the emails it counts: the
 * reservations made in one turn of the event loop are summed per account and day, and every account's sum is
 * added by one statement (quota-repo.ts reserveEach). Every send reserved its own statement before, each a
 * transaction on the account's one counter row, which at a thousand sends a second cost PostgreSQL more than the
 * email's own insert (docs/benchmark.md, "Session 18"); then one statement per account, ten a turn when ten
 * accounts send ("Session 20"). A sum fits or it does not: when it does not, the same reservations are made
 * again one at a time, in the order they came, so each is admitted exactly as it would have been alone (the
 * last ones of a day near its limit refused, the earlier ones kept).
 *
 * A statement that fails is made again per account, so that one account's failure fails its own reservations
 * and no other's; unless the connection was lost with the statement's outcome unknown: reserving again could
 * count the same sends twice, so those reservations fail (their requests are refused and may be retried).
 */
export function groupedQuotaReserve(repo: Pick<QuotaRepo, 'reserve' | 'reserveEach'>): Reserve {
  const one = ({ item: r, resolve, reject }: Pending) =>
    repo.reserve(r.accountId, r.day, r.n, r.limit).then(resolve, reject);
  const sum = (group: Pending[]): QuotaCounter => ({ ...group[0]!.item, n: group.reduce((s, w) => s + w.item.n, 0) });

  /** A counter's reservations after their sum's answer: all admitted with it, or each tried alone, in order. */
  async function settle(group: Pending[], used: number | undefined): Promise<void> {
    if (used !== undefined) for (const w of group) w.resolve(used);
    else for (const w of group) await one(w);
  }

  /** One counter's reservations by one statement of their sum (a single one as itself). */
  async function alone(group: Pending[]): Promise<void> {
    if (group.length === 1) return one(group[0]!);
    const { accountId, day, n, limit } = sum(group);
    let used: number | undefined;
    try {
      used = await repo.reserve(accountId, day, n, limit);
    } catch (err) {
      for (const w of group) w.reject(err);
      return;
    }
    await settle(group, used);
  }

  const grouped = groupPerTurn<QuotaCounter, number | undefined>(MAX_BATCH, async (batch) => {
    const byCounter = new Map<string, Pending[]>();
    for (const w of batch) {
      const key = `${w.item.accountId} ${w.item.day} ${w.item.limit}`;
      const group = byCounter.get(key);
      if (group) group.push(w);
      else byCounter.set(key, [w]);
    }
    // One statement changes an account's row for a day once: a second limit for it in the same turn (its quota
    // changed meanwhile) is reserved by a statement of its own.
    const together: Pending[][] = [];
    const apart: Pending[][] = [];
    const taken = new Set<string>();
    for (const group of byCounter.values()) {
      const { accountId, day } = group[0]!.item;
      (taken.has(`${accountId} ${day}`) ? apart : together).push(group);
      taken.add(`${accountId} ${day}`);
    }
    const work = apart.map(alone);
    if (together.length === 1) work.push(alone(together[0]!));
    else if (together.length > 1)
      work.push(
        repo.reserveEach(together.map(sum)).then(
          (used) => Promise.all(together.map((group, i) => settle(group, used[i]))).then(() => undefined),
          async (err: unknown) => {
            if (isCommitOutcomeUnknown(err)) for (const w of together.flat()) w.reject(err);
            else await Promise.all(together.map(alone));
          },
        ),
      );
    await Promise.all(work);
  });
  return (accountId, day, n, limit) => grouped({ accountId, day, n, limit });
}
