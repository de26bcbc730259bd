import type { StatsGroup } from '../catalog.js';

/** Recipients of an account's emails by what happened to them (CONTRACT.md "Stats and timelines"; docs/api.md "Stats"). */
export interface StatsCounts {
  accepted: number;
  delivered: number;
  deferred: number;
  bounced: number;
  complained: number;
  opened: number;
  clicked: number;
  unsubscribed: number;
}

/** One row of GET /stats: the group's key and its counts; `sampleReplies` only when grouped by recipient domain. */
export interface StatsRow extends StatsCounts {
  key: string;
  sampleReplies: string[];
}

/** What GET /stats asks: whole UTC days, `fromDay` through `toDay` (YYYY-MM-DD, both included). */
export interface StatsQuery {
  accountId: string;
  fromDay: string;
  toDay: string;
  groupBy: StatsGroup;
}
