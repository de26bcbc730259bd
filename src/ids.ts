import { monotonicFactory } from 'ulid';

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
  account: 'acc',
  deliveryGroup: 'dlg',
  event: 'evt',
  caught: 'cau',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

const ulid = monotonicFactory();

export function newId(kind: IdKind): string {
  return `${ID_PREFIXES[kind]}_${ulid().toLowerCase()}`;
}
