import { Readable } from 'node:stream';
import type { Sql } from '../sql.js';

/** The largest row of inbound_blobs (migration 29's check): a chunk is cut at this size. */
export const BLOB_CHUNK_BYTES = 256 * 1024;
/** Chunks one INSERT carries at most, and one page of a read: 1 MiB either way. */
const CHUNKS_PER_STATEMENT = 4;

/**
 * The stored bytes of inbound mail (src/inbound/blob-store.ts, whose interface this is) in PostgreSQL: a key's
 * bytes are rows of inbound_blobs, (key, seq) in order, each at most 256 KiB.
 *
 * Each INSERT and each page of a read is a statement of its own: no connection (or transaction) is held while
 * waiting on a slow client, who may take minutes to send 25 MiB; what is already written is no row of any
 * inbound email until the email's row commits, so a crash or a refusal midway leaves bytes no row names. The
 * writer removes them on the way out; `deleteOrphanBlobs` (retention) sweeps those a crash left behind.
 */
export function createInboundBlobsRepo(sql: Sql) {
  const insert = async (key: string, first: number, chunks: Buffer[]) => {
    const rows = chunks.map((data, i) => ({ key, seq: first + i, data }));
    await sql`insert into inbound_blobs ${sql(rows, 'key', 'seq', 'data')}`;
  };

  const remove = async (keys: string[]): Promise<number> => {
    if (keys.length === 0) return 0;
    const gone = await sql`delete from inbound_blobs where key = any(${keys}::text[])`;
    return gone.count;
  };

  return {
    /**
     * Stores `source` under `key` as it arrives, in chunks of BLOB_CHUNK_BYTES: complete chunks are inserted
     * (those already waiting together, in one statement) while the next ones are read, and reading waits when
     * more than a few are waiting, so memory holds about a megabyte however large the message. Past `maxBytes`
     * nothing more is kept, the source is read to its end (an SMTP client answers only after it), what was
     * written is removed and the answer is `too_large`. Fails (after removing what it wrote) when the source or
     * the database does.
     */
    async write(key: string, source: AsyncIterable<Buffer>, maxBytes: number): Promise<{ size: number } | 'too_large'> {
      let size = 0;
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      const ready: Buffer[] = [];
      let seq = 0;
      let flushing: Promise<void> | undefined;
      let failure: unknown;
      const flush = async () => {
        while (ready.length > 0 && failure === undefined) {
          const batch = ready.splice(0, CHUNKS_PER_STATEMENT);
          const first = seq;
          seq += batch.length;
          await insert(key, first, batch);
        }
      };
      const startFlush = () => {
        flushing ??= flush()
          .catch((err: unknown) => {
            failure = err;
          })
          .finally(() => {
            flushing = undefined;
          });
        return flushing;
      };
      const cut = (all: boolean) => {
        if (pendingBytes < BLOB_CHUNK_BYTES && !(all && pendingBytes > 0)) return;
        let joined = Buffer.concat(pending, pendingBytes);
        while (joined.length >= BLOB_CHUNK_BYTES) {
          ready.push(joined.subarray(0, BLOB_CHUNK_BYTES));
          joined = joined.subarray(BLOB_CHUNK_BYTES);
        }
        if (all && joined.length > 0) {
          ready.push(joined);
          joined = Buffer.alloc(0);
        }
        pending = joined.length > 0 ? [joined] : [];
        pendingBytes = joined.length;
      };
      try {
        for await (const piece of source) {
          size += piece.length;
          // Past the cap, or once the store failed: read on to the end, keep nothing.
          if (size > maxBytes || failure !== undefined) continue;
          pending.push(piece);
          pendingBytes += piece.length;
          cut(false);
          if (ready.length > 0) void startFlush();
          // Backpressure: the client waits (TCP) while the database catches up.
          if (ready.length >= CHUNKS_PER_STATEMENT) await flushing;
        }
        if (size <= maxBytes && failure === undefined) {
          cut(true);
          while (ready.length > 0 && failure === undefined) await startFlush();
        }
        await flushing;
        if (failure !== undefined) throw failure;
      } catch (err) {
        await flushing;
        await remove([key]).catch(() => undefined);
        throw err;
      }
      if (size > maxBytes) {
        await remove([key]);
        return 'too_large';
      }
      return { size };
    },

    /** The bytes under `key`, in order, read a page of a few chunks at a time (nothing when there is no such key). */
    read(key: string): Readable {
      async function* pages() {
        let next = 0;
        for (;;) {
          const rows = await sql<{ seq: number; data: Buffer }[]>`
            select seq, data from inbound_blobs where key = ${key} and seq >= ${next}
            order by seq limit ${CHUNKS_PER_STATEMENT}`;
          for (const row of rows) yield row.data;
          if (rows.length < CHUNKS_PER_STATEMENT) return;
          next = rows[rows.length - 1]!.seq + 1;
        }
      }
      return Readable.from(pages(), { objectMode: false });
    },

    /** Copies the bytes under `from` to `to` inside the database (one statement; nothing passes through here). */
    async copy(from: string, to: string): Promise<void> {
      await sql`insert into inbound_blobs (key, seq, data) select ${to}, seq, data from inbound_blobs where key = ${from}`;
    },

    /** Removes the bytes under each of `keys`; answers how many chunks went. */
    remove,

    /**
     * Retention's sweep of bytes no inbound email names: written before `before` (an hour ago: no message still
     * arriving is that old, the listener ends a session after 5 minutes) under a key whose inbound email (the
     * key's part before '/') does not exist, left by a crash between the write and the row's commit. Removes
     * at most `limit` chunks; answers how many.
     */
    async deleteOrphanBlobs(before: Date, limit: number): Promise<{ rows: number }> {
      const [row] = await sql<{ n: number }[]>`
        with gone as (
          delete from inbound_blobs where ctid = any(array(
            select b.ctid from inbound_blobs b
            where b.created_at < ${before}
              and not exists (select 1 from inbound_emails e where e.id = split_part(b.key, '/', 1))
            limit ${limit} for update skip locked))
          returning 1)
        select count(*)::int as n from gone`;
      return { rows: row?.n ?? 0 };
    },
  };
}
export type InboundBlobsRepo = ReturnType<typeof createInboundBlobsRepo>;
