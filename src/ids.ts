import { encodeTime, monotonicFactory } from 'ulid';
import { randomFraction } from './random-pool.js';

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
  template: 'tpl',
  inboundRoute: 'rt',
  inbound: 'in',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

// ulid's own source asks the OS for randomness once per character (16 calls per id); the pool's bytes are the
// same CSPRNG's. A byte over 256 picks one of ulid's 32 characters uniformly (it scales by 32 and floors).
const ulid = monotonicFactory(randomFraction);

export function newId(kind: IdKind): string {
  return `${ID_PREFIXES[kind]}_${ulid().toLowerCase()}`;
}

/** The smallest id of `kind` created at or after `at`: `id >= idAt(kind, t)` selects by time on an id index. */
export function idAt(kind: IdKind, at: Date): string {
  return `${ID_PREFIXES[kind]}_${encodeTime(at.getTime(), 10).toLowerCase()}`;
}
