import type { ParsedMail } from 'mailparser';
import { checkStream } from '../domain/streams.js';
import { singleHeader } from './submission-template.js';

/**
 * SMTP submission choosing a stream (CONTRACT.md "Streams"; docs/submission.md): `X-Mail-Stream: broadcast`
 * and `X-Mail-Topic: <topic>` stand for a send's `stream` and `topic`. Like the template headers they are
 * the service's to read and are never sent on; a bad value refuses the message as the API refuses the field.
 */
export const STREAM_HEADERS = { stream: 'x-mail-stream', topic: 'x-mail-topic' } as const;

/** Shown in a refusal as a mail client writes the header. */
const SHOWN = { stream: 'X-Mail-Stream', topic: 'X-Mail-Topic' } as const;

/** The stream and topic a submitted message names, as a send request gives them (empty: not given). */
export function streamOfMessage(parsed: ParsedMail): { stream: string; topic: string } {
  // A stream is a token: `Broadcast` is broadcast. A topic is kept as written.
  const stream = (singleHeader(parsed, STREAM_HEADERS.stream) ?? '').toLowerCase();
  const topic = singleHeader(parsed, STREAM_HEADERS.topic) ?? '';
  checkStream({ stream, topic }, (name) => SHOWN[name as keyof typeof SHOWN]);
  return { stream, topic };
}
