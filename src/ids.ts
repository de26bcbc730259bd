import { encodeTime, monotonicFactory } from 'ulid';

/**
 * Identifiers are opaque, prefixed and time-ordered (CONTRACT.md): the prefix says what a thing is, so
 * an email id never equals a job id, and ULIDs sort by creation time, which keeps list queries and
 * B-tree inserts cheap.
 */
export const ID_PREFIXES = {
  email: 'em',
  scheduled: 'sch',
  batch: 'bat',
  apiKey: 'key',
  webhook: 'wh',
  domain: 'dom',
  dkimKey: 'dk',
  account: 'acc',
  deliveryGroup: 'dlg',
  webhookGroup: 'whg',
  event: 'evt',
  caught: 'cau',
  suppression: 'sup',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

const ulid = monotonicFactory();

export function newId(kind: IdKind): string {
  return `${ID_PREFIXES[kind]}_${ulid().toLowerCase()}`;
}

/** The smallest id of `kind` created at or after `at`: `id >= idAt(kind, t)` selects by time on an id index. */
export function idAt(kind: IdKind, at: Date): string {
  return `${ID_PREFIXES[kind]}_${encodeTime(at.getTime(), 10).toLowerCase()}`;
}
