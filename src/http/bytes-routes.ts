import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { CallContext } from '../api/call-context.js';
import { rateMetadata } from '../api/error-metadata.js';
import {
  attachmentDisposition,
  safeFilename,
  servedContentType,
  UNTRUSTED_CONTENT_HEADERS,
} from '../domain/inbound-content.js';
import { BODY_LIMITS } from '../domain/limits.js';
import { admitting, decode } from './gateway.js';
import type { RestRoute } from './rest-routes.js';

/** A server-streaming RPC's chunk of stored bytes (mail.v1.InboundContentChunk): type and name on the first. */
interface Chunk {
  contentType?: string;
  filename?: string;
  data?: Uint8Array;
}
type StreamingHandler = (req: never, ctx: CallContext) => AsyncIterable<Chunk>;

/**
 * The routes of the table that answer stored bytes (RestRoute.bytes: an inbound message's raw form and its
 * attachments): the RPC streams chunks, and the answer's body is their bytes, in order, never held whole. The
 * first chunk is read before the status is sent, so a refusal, a missing message or an unreachable database is
 * still a status in `{error, message}` form. The bytes are a stranger's: the answer is a download with a safe
 * name, never sniffed nor rendered as a document of this origin (domain/inbound-content.ts).
 */
export function registerBytesRoutes(
  app: FastifyInstance,
  base: string,
  routes: RestRoute[],
  handlers: object,
  admit: (ctx: CallContext) => Promise<unknown>,
): void {
  for (const route of routes.filter((r) => r.bytes)) {
    const handler = (handlers as Record<string, StreamingHandler | undefined>)[route.rpc.localName];
    if (!handler) throw new Error(`no handler for ${route.rpc.name}`);
    app.route({
      method: route.method,
      url: `${base}${route.path}`,
      bodyLimit: BODY_LIMITS.other,
      onRequest: admitting(admit),
      handler: async (request, reply) => {
        const ctx = request.callContext!;
        const chunks = handler(decode(route, request) as never, ctx)[Symbol.asyncIterator]();
        const first = await chunks.next();
        if (ctx.rate) void reply.headers(rateMetadata(ctx.rate));
        const head: Chunk = first.done ? {} : first.value;
        const params = request.params as Record<string, string | undefined>;
        const fallback = params.n === undefined ? 'message.eml' : `attachment-${params.n}`;
        return reply
          .type(servedContentType(head.contentType ?? ''))
          .header('content-disposition', attachmentDisposition(safeFilename(head.filename ?? '', fallback)))
          .headers(UNTRUSTED_CONTENT_HEADERS)
          .send(Readable.from(bytesOf(head, chunks)));
      },
    });
  }
}

/** The first chunk's bytes, then the rest's. */
async function* bytesOf(first: Chunk, rest: AsyncIterator<Chunk>): AsyncGenerator<Buffer> {
  const bytes = (data: Uint8Array) => Buffer.from(data.buffer, data.byteOffset, data.length);
  try {
    if (first.data && first.data.length > 0) yield bytes(first.data);
    for (;;) {
      const next = await rest.next();
      if (next.done) return;
      const data = next.value.data;
      if (data && data.length > 0) yield bytes(data);
    }
  } finally {
    // A client gone midway: the RPC's stream (and the store's read under it) is closed too.
    await rest.return?.();
  }
}
