import { Transform, type Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { BodyMeter, BytesInFlight } from '../bytes-in-flight.js';

/**
 * Counts every REST request body in the process's bytes in flight (bytes-in-flight.ts) before Fastify buffers
 * it. preParsing runs after every onRequest hook, so an email API call has been admitted by then (the gateway
 * authenticates from the header alone) and its bytes count for its key too; bodies without a key (admin calls,
 * the console, tracking) count in the process total. A declared Content-Length is taken whole for the key, and
 * must fit in the process, before a byte is read: a body that does not fit is answered 429 with Retry-After
 * without being uploaded. Every body is then counted as it arrives, and refused at the chunk that overflows.
 * The bytes are given back when the answer is out or the connection closes, whichever comes first (an aborted
 * upload included).
 */
export function countBodiesInFlight(app: FastifyInstance, bytes: BytesInFlight): void {
  app.addHook('preParsing', async (request, reply, payload) => {
    const meter = bytes.meter(request.callContext?.principal?.keyId);
    reply.raw.once('close', () => meter.release());
    const declared = declaredLength(request.headers['content-length']);
    // Over the route's own limit Fastify refuses it 413 before reading: a 429 would invite a vain retry.
    if (declared !== undefined && declared > (request.routeOptions.bodyLimit ?? 0)) return payload;
    // A small declared body (a send) is taken whole at once, for the key and in all: Fastify reads exactly the
    // declared length or refuses the request, so nothing needs counting as it arrives (no stream per request).
    if (declared !== undefined && declared <= WHOLE_AT_ONCE_BYTES) {
      meter.allocate(declared);
      return payload;
    }
    if (declared !== undefined) meter.declare(declared);
    return counted(payload, meter, request.routeOptions.bodyLimit ?? 0);
  });
}

/** Bodies declared up to this size are counted whole on arrival rather than chunk by chunk. */
const WHOLE_AT_ONCE_BYTES = 256 * 1024;

function declaredLength(header: string | undefined): number | undefined {
  if (header === undefined || !/^\d+$/.test(header)) return undefined;
  return Number(header);
}

/**
 * The body as it arrives, each chunk counted and kept here until the body has ended, then handed to Fastify.
 * From the first chunk that does not fit, what was kept is dropped and its bytes given back at once (so a crowd
 * of refused uploads cannot hold the room the others need), the rest is read and dropped (up to the route's
 * limit), and the refusal is answered once the body has ended: a client that reads no answer before it has sent
 * everything (Node's, for one) gets the 429 rather than a connection reset in the middle of its upload. A body
 * past the route's limit goes on to Fastify as it comes, which answers it 413 as without this.
 */
function counted(payload: Readable, meter: BodyMeter, limit: number): Readable {
  let arrived = 0;
  let kept: Buffer[] = [];
  let refusal: Error | undefined;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      arrived += chunk.length;
      if (refusal === undefined) {
        try {
          meter.take(chunk.length);
        } catch (err) {
          refusal = err as Error;
          kept = [];
          meter.release();
        }
      }
      if (arrived > limit) {
        // Over the route's limit: refused now, as Fastify does (it closes the connection).
        if (refusal !== undefined) {
          payload.unpipe(counter);
          return done(refusal);
        }
        for (const c of kept) this.push(c);
        kept = [];
        return done(null, chunk);
      }
      if (refusal === undefined) kept.push(chunk);
      done();
    },
    flush(done) {
      if (refusal !== undefined) return done(refusal);
      for (const c of kept) this.push(c);
      kept = [];
      done();
    },
  });
  return payload.pipe(counter);
}
