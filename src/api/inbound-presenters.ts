import { fromJson, type MessageInitShape } from '@bufbuild/protobuf';
import type { InboundEmailRow } from '../domain/entities/inbound.js';
import { inboundEmailJson } from '../domain/inbound-json.js';
import { InboundEmailSchema, type InboundContentChunkSchema } from '../gen/mail/v1/inbound_pb.js';
import type { InboundContent } from '../services/inbound-emails-service.js';

/**
 * An inbound email as the API answers it: read from the very JSON its `inbound` event carries (inbound-json.ts),
 * so GET /inbound/emails/:id and the webhook name the same fields with the same values.
 */
export const presentInboundEmail = (row: InboundEmailRow) => fromJson(InboundEmailSchema, inboundEmailJson(row));

type Chunk = MessageInitShape<typeof InboundContentChunkSchema>;

/**
 * Stored bytes as InboundContentChunk messages, in order: the content type and file name on the first only. An
 * empty content is still one (empty) chunk, so the caller always learns its type. `open` runs when the first
 * chunk is asked for (a promise made earlier could reject with nobody awaiting it yet).
 */
export async function* contentChunks(open: () => Promise<InboundContent>): AsyncGenerator<Chunk> {
  const { contentType, filename, chunks } = await open();
  let first = true;
  for await (const data of chunks) {
    yield first ? { contentType, filename, data } : { data };
    first = false;
  }
  if (first) yield { contentType, filename, data: new Uint8Array() };
}
