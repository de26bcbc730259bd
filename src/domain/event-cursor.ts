import { invalid } from '../errors.js';

/**
 * A position in an account's event feed: the writing transaction (xid8, as decimal text) and the event id,
 * the order the feed reads in (migration 0008 says why not the id alone). Clients are told it is opaque;
 * only this file reads it.
 */
export interface FeedPosition {
  tx: string;
  id: string;
}

const EVENT_PREFIX = 'evt_';

/**
 * Every string of this shape is a position (one the feed may not have reached yet), so the OpenAPI
 * document states the whole rule. At most 19 digits keep any value inside xid8's 64 bits; PostgreSQL
 * refuses leading zeros in an xid8.
 */
export const CURSOR_PATTERN = /^(0|[1-9][0-9]{0,18})-[0-9a-z]{26}$/;

export function encodeCursor(p: FeedPosition): string {
  return `${p.tx}-${p.id.slice(EVENT_PREFIX.length)}`;
}

/** The position of a cursor; '' is the feed's start. Anything else is a 400. */
export function decodeCursor(cursor: string): FeedPosition | undefined {
  if (cursor === '') return undefined;
  if (!CURSOR_PATTERN.test(cursor))
    throw invalid(`after must be empty or a next_cursor of an earlier answer; got "${cursor.slice(0, 100)}"`);
  const dash = cursor.indexOf('-');
  return { tx: cursor.slice(0, dash), id: EVENT_PREFIX + cursor.slice(dash + 1) };
}
