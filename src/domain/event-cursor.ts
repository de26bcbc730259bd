import { invalid } from '../errors.js';

/**
 * A position in an account's event feed: the writing transaction (xid8, as decimal text) and the event id,
 * the order the feed reads in (migration 0008 says why not the id alone). Clients get it as an opaque
 * string; its shape may change, so nothing but this file reads it.
 */
export interface FeedPosition {
  tx: string;
  id: string;
}

const VERSION = 'c1';
const DECODED = /^c1\.(\d{1,20})\.(evt_[0-9a-z]{26})$/;

export function encodeCursor(p: FeedPosition): string {
  return Buffer.from(`${VERSION}.${p.tx}.${p.id}`).toString('base64url');
}

/** The position of a cursor this API gave; '' is the feed's start. A cursor it did not give is a 400. */
export function decodeCursor(cursor: string): FeedPosition | undefined {
  if (cursor === '') return undefined;
  const m = /^[A-Za-z0-9_-]{1,100}$/.test(cursor) ? DECODED.exec(Buffer.from(cursor, 'base64url').toString('latin1')) : null;
  if (!m) throw invalid('after must be a next_cursor from an earlier answer of GET /events (or empty for the first page)');
  return { tx: m[1]!, id: m[2]! };
}
