import { describe, expect, it } from 'vitest';
import { BLOB_CHUNK_BYTES } from '../../src/db/index.js';
import { createInboundBlobsRepo } from '../../src/db/repos/inbound-blobs-repo.js';
import { useStack } from '../helpers/use-stack.js';

describe('the inbound blob store over PostgreSQL', () => {
  const stack = useStack();

  it('gives back exactly what was written, at every size around its chunks and pages, read after read', async () => {
    const blobs = createInboundBlobsRepo(stack.mailer.sql);
    const sizes = [0, 1, 50_000, BLOB_CHUNK_BYTES, BLOB_CHUNK_BYTES + 1, 700_000, 4 * BLOB_CHUNK_BYTES, 3_000_000];
    for (const size of sizes) {
      const data = Buffer.alloc(size);
      for (let i = 0; i < size; i += 997) data[i] = i % 251;
      // Written in uneven pieces, as a socket hands them over.
      async function* pieces() {
        for (let at = 0; at < size; at += 100_003) yield data.subarray(at, at + 100_003);
      }
      expect(await blobs.write(`in_blobs${size}/raw`, pieces(), Number.MAX_SAFE_INTEGER)).toEqual({ size });
      const rows = await stack.mailer.sql<{ seq: number; n: number }[]>`
        select seq, octet_length(data) as n from inbound_blobs where key = ${`in_blobs${size}/raw`} order by seq`;
      expect(rows.every((r, i) => r.seq === i && r.n <= BLOB_CHUNK_BYTES)).toBe(true);
      // Read several times over the same pool: a read must leave its connection able to answer the next query
      // (postgres.js left a COPY's connection paused when its answer ended in the packet that filled the stream).
      for (let i = 0; i < 3; i++) {
        const back = Buffer.concat(await blobs.read(`in_blobs${size}/raw`).toArray());
        expect(back.equals(data), `${size} bytes, read ${i}`).toBe(true);
      }
    }
    expect(await blobs.read('in_none/raw').toArray()).toEqual([]);
  }, 60_000);

  it('refuses past its cap and keeps nothing; copies and removes by key', async () => {
    const blobs = createInboundBlobsRepo(stack.mailer.sql);
    async function* big() {
      for (let i = 0; i < 10; i++) yield Buffer.alloc(BLOB_CHUNK_BYTES, i);
    }
    expect(await blobs.write('in_cap/raw', big(), 5 * BLOB_CHUNK_BYTES)).toBe('too_large');
    const [left] = await stack.mailer.sql<{ n: number }[]>`
      select count(*)::int as n from inbound_blobs where key = 'in_cap/raw'`;
    expect(left!.n).toBe(0);

    async function* small() {
      yield Buffer.from('hello');
    }
    await blobs.write('in_a/raw', small(), 100);
    await blobs.copy('in_a/raw', 'in_b/raw');
    expect(Buffer.concat(await blobs.read('in_b/raw').toArray()).toString()).toBe('hello');
    expect(await blobs.remove(['in_a/raw', 'in_b/raw'])).toBe(2);
    expect(await blobs.read('in_a/raw').toArray()).toEqual([]);
  });

  it('removes what it wrote when its source fails midway', async () => {
    const blobs = createInboundBlobsRepo(stack.mailer.sql);
    async function* failing() {
      for (let i = 0; i < 6; i++) yield Buffer.alloc(BLOB_CHUNK_BYTES, i);
      throw new Error('the client went away');
    }
    await expect(blobs.write('in_gone/raw', failing(), Number.MAX_SAFE_INTEGER)).rejects.toThrow('went away');
    const [left] = await stack.mailer.sql<{ n: number }[]>`
      select count(*)::int as n from inbound_blobs where key = 'in_gone/raw'`;
    expect(left!.n).toBe(0);
  });
});
