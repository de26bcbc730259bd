import { describe, expect, it } from 'vitest';
import { createChunkLoader } from '../../src/delivery/queue/chunk-loader.js';

describe('chunk loader (delivery content, one chunk ahead)', () => {
  it('loads each chunk once, the next one ahead of its first use, and only what is asked for', async () => {
    const ids = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    const loads: string[][] = [];
    const loader = createChunkLoader(ids, 3, async (chunk) => {
      loads.push(chunk);
      return new Set(chunk);
    });
    expect((await loader.chunkOf('a')).has('a')).toBe(true);
    expect(loads).toEqual([
      ['a', 'b', 'c'],
      ['d', 'e', 'f'],
    ]);
    await loader.chunkOf('b');
    expect((await loader.chunkOf('e')).has('e')).toBe(true);
    expect(loads).toEqual([['a', 'b', 'c'], ['d', 'e', 'f'], ['g']]);
    await loader.chunkOf('g');
    expect(loads).toHaveLength(3);
  });

  it('a failed load fails whoever asks for that chunk, and only them', async () => {
    const loader = createChunkLoader(['a', 'b', 'c', 'd'], 2, async (chunk) => {
      if (chunk.includes('c')) throw new Error('database down');
      return chunk;
    });
    expect(await loader.chunkOf('a')).toEqual(['a', 'b']);
    await expect(loader.chunkOf('d')).rejects.toThrow('database down');
  });
});
