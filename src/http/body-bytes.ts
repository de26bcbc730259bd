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
    if (declared !== undefined) meter.declare(declared);
    return counted(payload, meter);
  });
}

function declaredLength(header: string | undefined): number | undefined {
  if (header === undefined || !/^\d+$/.test(header)) return undefined;
  return Number(header);
}

/** The body as it arrives, each chunk counted before it is passed on; the first chunk that does not fit fails it. */
function counted(payload: Readable, meter: BodyMeter): Readable {
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      try {
        meter.take(chunk.length);
        done(null, chunk);
      } catch (err) {
        // Nothing more is wanted: Fastify answers the error (with Connection: close, as the client may still be sending).
        payload.unpipe(counter);
        done(err as Error);
      }
    },
  });
  return payload.pipe(counter);
}
