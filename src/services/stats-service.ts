import { isOneOf, STATS_GROUPS, type StatsGroup } from '../domain/catalog.js';
import type { StatsRow } from '../domain/entities/stats.js';
import { invalid, notFound } from '../errors.js';
import { FOLD_BATCH, type AccountsRepo, type StatsRepo } from '../db/index.js';
import type { Logger } from '../logger.js';

/** GET /stats's range (CONTRACT.md "Stats and timelines"): 30 days unless asked, at most 90. */
export const STATS_RANGE_DAYS = { default: 30, max: 90 } as const;

const DAY_MS = 86_400_000;
/** `YYYY-MM-DD`, optionally `THH:MM[:SS[.fff]]` and a zone (`Z`, `+02:00`); no zone is UTC. */
const ISO_8601 = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)(Z|[+-]\d{2}:?\d{2})?)?$/i;

/** A request's `from` or `to` as an instant: 400 naming `field` unless it is an ISO 8601 date or date-time. */
export function parseInstant(field: string, value: string): Date {
  const m = ISO_8601.exec(value.trim());
  const at = m ? Date.parse(m[2] === undefined ? `${m[1]}T00:00:00Z` : `${m[1]}T${m[2]}${m[3] ?? 'Z'}`) : NaN;
  // Date.parse rolls 2026-02-30 over to March: a date that does not exist is refused, not moved.
  if (!m || Number.isNaN(at) || new Date(Date.parse(`${m[1]}T00:00:00Z`)).toISOString().slice(0, 10) !== m[1])
    throw invalid(
      `${field} must be an ISO 8601 date or date-time (2026-11-01 or 2026-11-01T00:00:00Z); got "${value}"`,
    );
  // Ids are made from the clock since 1970 (ids.ts): no mail is older, and a range before it has no id to start at.
  if (at < 0) throw invalid(`${field} must be in 1970 or later; got "${value}"`);
  return new Date(at);
}

const dayOf = (at: Date) => at.toISOString().slice(0, 10);
const startOfDay = (day: string) => Date.parse(`${day}T00:00:00Z`);

/** The range and grouping a request asks, defaults filled in: whole UTC days, `fromDay` through `toDay`. */
export interface StatsRange {
  fromDay: string;
  toDay: string;
  groupBy: StatsGroup;
}

/**
 * Reads a request's `from`, `to` and `group_by` (empty: the default). `to` defaults to now; `from` to the start
 * of the 30th day back, so the default is the last 30 UTC days with today. A bad date, `from` after `to`, more
 * than 90 days between them or an unknown `group_by` is a 400 naming the parameter.
 */
export function statsRange(req: { from: string; to: string; groupBy: string }, now: Date): StatsRange {
  const groupBy = req.groupBy === '' ? 'day' : req.groupBy;
  if (!isOneOf(STATS_GROUPS, groupBy))
    throw invalid(`group_by must be one of ${STATS_GROUPS.join(', ')}; got "${req.groupBy}"`);
  const to = req.to === '' ? now : parseInstant('to', req.to);
  const from =
    req.from === ''
      ? new Date(startOfDay(dayOf(to)) - (STATS_RANGE_DAYS.default - 1) * DAY_MS)
      : parseInstant('from', req.from);
  if (from > to) throw invalid(`from (${from.toISOString()}) is after to (${to.toISOString()})`);
  if (to.getTime() - from.getTime() > STATS_RANGE_DAYS.max * DAY_MS)
    throw invalid(
      `from: the range from ${from.toISOString()} to ${to.toISOString()} is over ${STATS_RANGE_DAYS.max} days`,
    );
  return { fromDay: dayOf(from), toDay: dayOf(to), groupBy };
}

/** Every day from `fromDay` through `toDay`, in order. */
function daysOf(fromDay: string, toDay: string): string[] {
  const out: string[] = [];
  for (let t = startOfDay(fromDay); t <= startOfDay(toDay); t += DAY_MS) out.push(dayOf(new Date(t)));
  return out;
}

const emptyRow = (key: string): StatsRow => ({
  key,
  accepted: 0,
  delivered: 0,
  deferred: 0,
  bounced: 0,
  complained: 0,
  opened: 0,
  clicked: 0,
  unsubscribed: 0,
  sampleReplies: [],
});

export interface StatsAnswer {
  rows: StatsRow[];
  /** The range answered: the start of its first day and the end (exclusive) of its last, ISO 8601. */
  from: string;
  to: string;
  groupBy: StatsGroup;
}

/** GET /stats (CONTRACT.md "Stats and timelines"; what each counter counts: docs/api.md "Stats"). */
export function createStatsService(deps: { stats: StatsRepo; accounts: Pick<AccountsRepo, 'get'>; now?: () => Date }) {
  const now = deps.now ?? (() => new Date());
  return {
    /** 404 unless the account exists: an operator's call names one (an API key's is its own). */
    async assertAccount(accountId: string): Promise<void> {
      if (!(await deps.accounts.get(accountId))) throw notFound('account', accountId);
    },

    /**
     * The account's stats. Grouped by day, every day of the range has a row, oldest first (a chart wants them
     * continuous); other groupings list the keys that had mail, in key order.
     */
    async get(accountId: string, req: { from: string; to: string; groupBy: string }): Promise<StatsAnswer> {
      const range = statsRange(req, now());
      const rows = await deps.stats.query({ accountId, ...range });
      const answer = {
        from: `${range.fromDay}T00:00:00.000Z`,
        to: new Date(startOfDay(range.toDay) + DAY_MS).toISOString(),
      };
      if (range.groupBy !== 'day') return { rows, ...answer, groupBy: range.groupBy };
      const byDay = new Map(rows.map((r) => [r.key, r]));
      return {
        rows: daysOf(range.fromDay, range.toDay).map((d) => byDay.get(d) ?? emptyRow(d)),
        ...answer,
        groupBy: range.groupBy,
      };
    },
  };
}
export type StatsService = ReturnType<typeof createStatsService>;

/**
 * The fold (db/repos/stats-repo.ts): every account with events not folded yet, in batches until caught up.
 * Run by the worker's timer; a process that dies mid-fold loses nothing (each batch commits with its mark).
 */
export function createStatsFold(deps: { stats: Pick<StatsRepo, 'accountsBehind' | 'foldAccount'>; logger: Logger }) {
  return async function fold(): Promise<number> {
    let events = 0;
    for (const accountId of await deps.stats.accountsBehind()) {
      for (;;) {
        const n = await deps.stats.foldAccount(accountId);
        events += n;
        if (n < FOLD_BATCH) break;
      }
    }
    if (events > 0) deps.logger.debug({ events }, 'folded events into the stats rollup');
    return events;
  };
}
