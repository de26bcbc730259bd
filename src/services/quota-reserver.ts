import type { QuotaRepo } from '../db/index.js';
import { groupPerTurn, type Waiting } from '../group-commit.js';

/** Most reservations summed into one statement. */
const MAX_BATCH = 256;

type Reserve = QuotaRepo['reserve'];
interface Reservation {
  accountId: string;
  day: string;
  n: number;
  limit: number;
}

/**
 * Group commit (group-commit.ts) for the daily quota, as accept-writer.ts does for the emails it counts: the
 * reservations of one account and day made in one turn of the event loop are added by one statement, their
 * sum. Every send reserved its own statement before, each a transaction on the account's one counter row,
 * which at a thousand sends a second cost PostgreSQL more than the email's own insert (docs/benchmark.md,
 * "Session 18"). The sum fits or it does not: when it does not, the same reservations are made again one at a
 * time, in the order they came, so each is admitted exactly as it would have been alone (the last ones of a day
 * near its limit refused, the earlier ones kept). An error fails every reservation of the statement, as it
 * would have failed each.
 */
export function groupedQuotaReserve(reserve: Reserve): Reserve {
  const one = ({ item: r, resolve, reject }: Waiting<Reservation, number | undefined>) =>
    reserve(r.accountId, r.day, r.n, r.limit).then(resolve, reject);
  const grouped = groupPerTurn<Reservation, number | undefined>(MAX_BATCH, async (batch) => {
    const byCounter = new Map<string, Waiting<Reservation, number | undefined>[]>();
    for (const w of batch) {
      const key = `${w.item.accountId} ${w.item.day} ${w.item.limit}`;
      const group = byCounter.get(key);
      if (group) group.push(w);
      else byCounter.set(key, [w]);
    }
    await Promise.all(
      [...byCounter.values()].map(async (group) => {
        if (group.length === 1) return one(group[0]!);
        const { accountId, day, limit } = group[0]!.item;
        let used: number | undefined;
        try {
          used = await reserve(
            accountId,
            day,
            group.reduce((sum, w) => sum + w.item.n, 0),
            limit,
          );
        } catch (err) {
          for (const w of group) w.reject(err);
          return;
        }
        if (used !== undefined) for (const w of group) w.resolve(used);
        else for (const w of group) await one(w);
      }),
    );
  });
  return (accountId, day, n, limit) => grouped({ accountId, day, n, limit });
}
