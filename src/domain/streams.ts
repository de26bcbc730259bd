import { invalid } from '../errors.js';
import { isOneOf, STREAMS, type Stream } from './catalog.js';

/**
 * The stream rules of a send (CONTRACT.md, "Streams, one-click unsubscribe and suppressions"): `stream` is
 * `transactional` (the default) or `broadcast`; only a broadcast email may have a `topic`, which is what an
 * unsubscribe from it covers; a broadcast email goes to exactly one address in `to` and none in `cc`/`bcc`,
 * because its unsubscribe link and its suppressions are per recipient.
 */

/** A topic as a send, a header and a suppression give it. */
export const TOPIC_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
export const TOPIC_MAX_CHARS = 64;

export interface StreamFields {
  stream: Stream;
  /** A broadcast email's topic; null when it has none. */
  topic: string | null;
}

const shown = (s: string) => JSON.stringify(s.length > 80 ? `${s.slice(0, 80)}…` : s);

/**
 * A send's stream and topic as given (empty: not given); `field` names them (`emails[3].stream` in a batch).
 * Answers them checked, or throws a 400 naming the field.
 */
export function checkStream(given: { stream: string; topic: string }, field: (name: string) => string): StreamFields {
  const stream = given.stream === '' ? 'transactional' : given.stream;
  if (!isOneOf(STREAMS, stream))
    throw invalid(`${field('stream')} must be one of ${STREAMS.join(', ')}; got ${shown(stream)}`);
  if (given.topic === '') return { stream, topic: null };
  if (stream !== 'broadcast') throw invalid(`${field('topic')} is only allowed with stream "broadcast"`);
  if (!TOPIC_PATTERN.test(given.topic)) {
    throw invalid(
      `${field('topic')}: ${shown(given.topic)} must be 1 to ${TOPIC_MAX_CHARS} of letters, digits, ".", "_" and "-"`,
    );
  }
  return { stream, topic: given.topic };
}

/** A broadcast email's recipients: exactly one in `to`, none in `cc` or `bcc` (each unsubscribes alone). */
export function checkBroadcastRecipients(
  stream: Stream,
  counts: { to: number; cc: number; bcc: number },
  field: (name: string) => string,
): void {
  if (stream !== 'broadcast') return;
  if (counts.to !== 1)
    throw invalid(`${field('to')}: a broadcast email has exactly one recipient in to; got ${counts.to}`);
  if (counts.cc > 0) throw invalid(`${field('cc')}: a broadcast email has no cc recipients; got ${counts.cc}`);
  if (counts.bcc > 0) throw invalid(`${field('bcc')}: a broadcast email has no bcc recipients; got ${counts.bcc}`);
}
