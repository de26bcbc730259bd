import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { idAt } from '../../ids.js';
import type { Sql } from '../sql.js';

/** COPY's binary format (PostgreSQL's COPY reference): its signature, flags and header extension length. */
const COPY_SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
const COPY_HEADER = Buffer.concat([COPY_SIGNATURE, Buffer.alloc(8)]);
/** The keys this store makes (`<in_id>/raw`, `<in_id>/<n>`): nothing else is ever written into a statement. */
const KEY_FORM = /^[A-Za-z0-9_-]{1,100}\/[A-Za-z0-9_-]{1,100}$/;
/** The end of a binary COPY: a field count of -1. */
const COPY_TRAILER = Buffer.from([0xff, 0xff]);

/** The largest row of inbound_blobs (migration 29's check): a chunk is cut at this size. */
export const BLOB_CHUNK_BYTES = 256 * 1024;
/**
 * How far back the orphan sweep looks: retention runs every few minutes to hours, so a crash's leftovers are
 * seen by many runs within this; bytes a longer outage of retention left past it stay (they are never served).
 */
const ORPHAN_SWEEP_DAYS = 2;
/** A chunk at most this large is written by a plain INSERT (insertSmall says why), larger ones by COPY. */
const SMALL_INSERT_BYTES = 64 * 1024;
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
  /**
   * Inserts chunks by COPY in its binary format: the bytes go to the server as they are. An INSERT's parameters
   * travel as text, bytea as hex: each 256 KiB chunk became a 512 KiB string and a 512 KiB message, garbage
   * enough that receiving a 25 MiB message raised the process's memory by over three times its size.
   */
  const insert = async (key: string, first: number, chunks: Buffer[]) => {
    if (chunks.length === 1 && chunks[0]!.length <= SMALL_INSERT_BYTES) return insertSmall(key, first, chunks[0]!);
    const copy = await sql`copy inbound_blobs (key, seq, data) from stdin (format binary)`.writable();
    const keyBytes = Buffer.from(key);
    const done = finished(copy);
    copy.write(COPY_HEADER);
    for (const [i, data] of chunks.entries()) {
      // A tuple: its field count, then each field's length and bytes (text as UTF-8, int4 big-endian, bytea raw).
      const head = Buffer.alloc(2 + 4 + keyBytes.length + 4 + 4 + 4);
      let at = head.writeInt16BE(3, 0);
      at = head.writeInt32BE(keyBytes.length, at);
      at += keyBytes.copy(head, at);
      at = head.writeInt32BE(4, at);
      at = head.writeInt32BE(first + i, at);
      head.writeInt32BE(data.length, at);
      copy.write(head);
      copy.write(data);
    }
    copy.end(COPY_TRAILER);
    await done;
  };

  /**
   * One small chunk (most messages and attachments are one) by a plain INSERT, sent in one write. The library
   * sends each piece of a COPY as a write of its own on a socket without TCP_NODELAY: the last small piece
   * (CopyDone) then waits for the server's delayed ACK of the data before it, about 40 ms a statement, which
   * bounded a connection to a dozen messages a second. Hex text for 64 KiB is no burden.
   */
  const insertSmall = async (key: string, seq: number, data: Buffer) => {
    await sql`insert into inbound_blobs (key, seq, data) values (${key}, ${seq}, ${data})`;
  };

  /**
   * A page of a key's chunks by COPY in its binary format, for the reason `insert` gives: a SELECT answers bytea
   * as hex text. COPY takes no parameters: the key is written into the statement, so only keys of the store's
   * own form (`<id>/<name>`, letters, digits, `_` and `-`) are read.
   */
  const page = async (key: string, from: number): Promise<{ seq: number; data: Buffer }[]> => {
    if (!KEY_FORM.test(key)) throw new Error(`not a blob key: ${JSON.stringify(key.slice(0, 100))}`);
    const stream = await sql
      .unsafe(
        `copy (select seq, data from inbound_blobs where key = '${key}' and seq >= ${Math.trunc(from)}
          order by seq limit ${CHUNKS_PER_STATEMENT}) to stdout (format binary)`,
      )
      .readable();
    const pieces = await new Promise<Buffer[]>((resolve, reject) => {
      const out: Buffer[] = [];
      stream.on('data', (piece: Buffer) => out.push(piece));
      stream.once('error', reject);
      stream.once('end', () => {
        // postgres.js (3.4.9) pauses its socket when a push of COPY data finds the stream's buffer full and
        // resumes it only from the stream's read(); when the rest of the answer came in the same packet, the
        // stream ends before any read() and the connection would stay paused, its next query never answered.
        stream._read(0);
        resolve(out);
      });
    });
    const all = pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces);
    // The header: signature (11 bytes), flags (4), then an extension area of the length that follows (4 + n).
    let at = COPY_SIGNATURE.length + 4;
    at += 4 + all.readInt32BE(at);
    const rows: { seq: number; data: Buffer }[] = [];
    for (;;) {
      const fields = all.readInt16BE(at);
      at += 2;
      if (fields === -1) return rows;
      const seq = all.readInt32BE(at + 4);
      at += 8;
      const length = all.readInt32BE(at);
      at += 4;
      rows.push({ seq, data: all.subarray(at, at + length) });
      at += length;
    }
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

    /**
     * The bytes under `key`, in order (nothing when there is no such key), read a page of a few chunks at a time:
     * each page one short statement whose answer is read whole before it is passed on, so a slow reader (an HTTP
     * download) holds no connection between pages.
     */
    read(key: string): Readable {
      async function* pages() {
        let next = 0;
        for (;;) {
          const rows = await page(key, next);
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
     * key's part before '/') does not exist, left by a crash between the write and the row's commit. Only keys
     * minted in the ORPHAN_SWEEP_DAYS before `before` are looked at: the key begins with the inbound email's
     * time-ordered id, so that is a range of the primary key, not every byte ever stored, each run. Removes at
     * most `limit` chunks; answers how many.
     */
    async deleteOrphanBlobs(before: Date, limit: number): Promise<{ rows: number }> {
      const from = idAt('inbound', new Date(before.getTime() - ORPHAN_SWEEP_DAYS * 86_400_000));
      const to = idAt('inbound', before);
      const [row] = await sql<{ n: number }[]>`
        with gone as (
          delete from inbound_blobs where ctid = any(array(
            select b.ctid from inbound_blobs b
            where b.key >= ${from} and b.key < ${to} and b.created_at < ${before}
              and not exists (select 1 from inbound_emails e where e.id = split_part(b.key, '/', 1))
            limit ${limit} for update skip locked))
          returning 1)
        select count(*)::int as n from gone`;
      return { rows: row?.n ?? 0 };
    },
  };
}
export type InboundBlobsRepo = ReturnType<typeof createInboundBlobsRepo>;
