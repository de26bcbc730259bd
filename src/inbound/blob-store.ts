import type { Readable } from 'node:stream';

/**
 * Where inbound mail's bytes are kept: each received message whole (`<in_id>/raw`) and each of its attachments
 * (`<in_id>/<n>`, n from 0), so that the API serves them exactly as they arrived without parsing again. The
 * implementation is PostgreSQL's inbound_blobs table (db/repos/inbound-blobs-repo.ts); an S3-compatible store
 * could implement the same calls (a multipart upload, GetObject, CopyObject, DeleteObjects).
 *
 * Nothing written is an inbound email until that email's row commits: a writer that gives up removes its keys,
 * and the retention sweep (`deleteOrphanBlobs`) removes what a crash left, an hour later.
 */
export interface BlobStore {
  /**
   * Stores `source` under `key` as it arrives, never holding it whole. More than `maxBytes`: the source is still
   * read to its end, nothing stays stored, and the answer is `too_large`. Throws (having removed what it wrote)
   * when the source or the store fails.
   */
  write(key: string, source: AsyncIterable<Buffer>, maxBytes: number): Promise<{ size: number } | 'too_large'>;
  /** The bytes under `key`, in order, streamed (empty when there is no such key). */
  read(key: string): Readable;
  /** The bytes under `from`, stored again under `to` (within the store). */
  copy(from: string, to: string): Promise<void>;
  /** Removes the bytes under each key; answers how many pieces went. */
  remove(keys: string[]): Promise<number>;
}

/** The key of a received message's bytes as they arrived. */
export const rawKey = (inboundId: string): string => `${inboundId}/raw`;
/** The key of attachment `n` (from 0) of a received message. */
export const attachmentKey = (inboundId: string, n: number): string => `${inboundId}/${n}`;
