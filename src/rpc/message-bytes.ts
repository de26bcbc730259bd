import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { Readable } from 'node:stream';
import { createContextKey, type ContextValues, type HandlerContext } from '@connectrpc/connect';
import type { BodyMeter, BytesInFlight } from '../bytes-in-flight.js';
import type { Logger } from '../logger.js';
import { admittedCall } from './admission-gate.js';
import { toConnectError } from './error-interceptor.js';

/**
 * Counts every call's request body in the process's bytes in flight (bytes-in-flight.ts) as connect-es reads
 * it, so that a key (or all callers together) cannot have more than their cap of messages being read, decoded
 * and handled at once. The call's meter is made on arrival and given back when its stream closes (answered,
 * reset or aborted). connect-es reads the body only after the request gate has admitted the call, and the gate
 * names the key (admitCallBody): an unauthenticated call reads nothing, and an admin call counts in the process
 * total only. A declared Content-Length is judged in the gate, before a byte is read: a Connect unary call's is
 * taken whole for the key and the process (connect-es allocates that much before reading), a gRPC or gRPC-Web
 * one for the key, as REST's. Then the bytes are counted as they are read, and the chunk that does not fit fails
 * the call. A refusal is RESOURCE_EXHAUSTED with `too many requests` and `retry-after`, as REST's 429.
 */

const BODY_METER = createContextKey<BodyMeter | undefined>(undefined, {
  description: "the call body's bytes in flight",
});
/** By the call's raw request: an Http2ServerRequest, which connect-fastify's types name by HTTP/1's IncomingMessage. */
const meters = new WeakMap<Readable, BodyMeter>();

/** On arrival (onRequest): the call's meter, and its body counted as it is read. */
export function meterCallBody(
  bytes: BytesInFlight,
  req: Http2ServerRequest,
  res: Http2ServerResponse,
  logger: Logger,
): void {
  const meter = bytes.meter();
  meters.set(req, meter);
  res.once('close', () => meter.release());
  countAsRead(req, meter, logger);
}

/** The call's meter, for its context values (connect-es hands the gate those, not the request). */
export function withBodyMeter(values: ContextValues, req: Readable): ContextValues {
  return values.set(BODY_METER, meters.get(req));
}

/** In the request gate, once the call is admitted: the key its bytes count for, and a declared length judged. */
export function admitCallBody(ctx: HandlerContext, readMaxBytes: number, logger: Logger): void {
  const meter = ctx.values.get(BODY_METER);
  if (!meter) return;
  meter.forKey(admittedCall(ctx).principal?.keyId);
  const declared = ctx.requestHeader.get('content-length');
  // Over the RPC's limit connect-es refuses it unread (payload too large): a retry would not help.
  if (declared === null || !/^\d+$/.test(declared) || Number(declared) > readMaxBytes) return;
  try {
    if (ctx.protocolName === 'connect') meter.allocate(Number(declared));
    else meter.declare(Number(declared));
  } catch (err) {
    throw toConnectError(err, logger, ctx.url);
  }
}

/**
 * connect-node reads a call's body with `for await` over the request, and no hook of connect-es sees the
 * bytes before they are buffered: so this request's own async iterator is replaced by one that counts each
 * chunk before handing it on. Throwing from it ends the read as connect-es's own readMaxBytes refusal does.
 */
function countAsRead(req: Http2ServerRequest, meter: BodyMeter, logger: Logger): void {
  const read = req[Symbol.asyncIterator].bind(req);
  Object.defineProperty(req, Symbol.asyncIterator, {
    configurable: true,
    value: async function* countedRead() {
      for await (const chunk of { [Symbol.asyncIterator]: read }) {
        try {
          meter.take((chunk as Buffer).length);
        } catch (err) {
          // What was read of it is dropped with the call: its bytes are free for the others now, not at its close.
          meter.release();
          throw toConnectError(err, logger, req.url);
        }
        yield chunk as Buffer;
      }
    },
  });
}
