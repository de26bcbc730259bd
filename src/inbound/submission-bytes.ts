import type { SMTPServerDataStream } from 'smtp-server';
import type { BodyMeter, BytesInFlight } from '../bytes-in-flight.js';

/**
 * SMTP submission's share of the process's bytes in flight (bytes-in-flight.ts), with REST and gRPC: a message
 * counts for its API key from its first byte of DATA until its answer, so 100 sessions cannot each hold a
 * 14.4 MiB message and its parsed copies at once. Refusals are BytesInFlightError, which smtp-replies.ts
 * answers 452 4.3.1 (insufficient system storage): a client keeps the message and tries again later.
 */

/**
 * MAIL FROM: throws the 452 when the key or the process has no room for the size the client declared
 * (`SIZE=`, RFC 1870) or, without one, for a byte more. Nothing is taken: DATA counts what really arrives.
 */
export function assertRoomForMessage(
  bytes: BytesInFlight,
  key: string,
  args: object | false | undefined,
  maxBytes: number,
): void {
  const declared = args ? Number((args as { SIZE?: unknown }).SIZE) : NaN;
  // A SIZE over the listener's maximum is refused 552 by smtp-server itself; an unparsable one declares nothing.
  bytes.assertRoom(key, Number.isInteger(declared) && declared > 0 ? Math.min(declared, maxBytes) : 1);
}

/**
 * A message's bytes from smtp-server's DATA stream, each chunk taken from `meter` as it arrives; undefined when
 * it is larger than `maxBytes`. When the meter refuses a chunk, what was kept is dropped and given back at once,
 * the rest is read and thrown away (the reply to DATA comes after the message), and the refusal is thrown. The
 * caller releases the meter once the message is answered.
 */
export function readCountedMessage(
  stream: SMTPServerDataStream,
  maxBytes: number,
  meter: BodyMeter,
): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] = [];
    let size = 0;
    let refusal: unknown;
    stream.on('data', (c: Buffer) => {
      size += c.length;
      if (refusal !== undefined) return;
      if (size > maxBytes) {
        // Answered 552 whatever follows: nothing of it is kept.
        chunks = [];
        meter.release();
        return;
      }
      try {
        meter.take(c.length);
        chunks.push(c);
      } catch (err) {
        refusal = err;
        chunks = [];
        meter.release();
      }
    });
    stream.on('error', reject);
    stream.on('end', () => {
      if (refusal !== undefined) return reject(refusal);
      const exceeded = stream.sizeExceeded === true || size > maxBytes;
      resolve(exceeded ? undefined : Buffer.concat(chunks));
      chunks = [];
    });
  });
}
