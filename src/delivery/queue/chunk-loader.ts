/**
 * Loads a list's items a chunk at a time, on demand, one chunk ahead: whoever asks for an item of chunk k
 * waits for that chunk's load (started at most once) and starts the load of chunk k + 1, so that sending never
 * waits for a chunk's queries at a chunk boundary. Chunks two behind the one asked for are dropped, which
 * bounds what is held in memory to about three chunks (each email's content may be up to 10 MB).
 */
export function createChunkLoader<T>(ids: string[], chunkSize: number, load: (chunk: string[]) => Promise<T>) {
  const chunks = new Map<number, Promise<T>>();
  const position = new Map(ids.map((id, i) => [id, i]));
  const start = (k: number) => {
    if (k * chunkSize >= ids.length || chunks.has(k)) return;
    const loading = load(ids.slice(k * chunkSize, (k + 1) * chunkSize));
    // A prefetch nobody awaits yet must not be an unhandled rejection; whoever awaits it gets the error.
    loading.catch(() => {});
    chunks.set(k, loading);
  };
  return {
    /** The loaded chunk holding `id` (one of `ids`). */
    chunkOf(id: string): Promise<T> {
      const k = Math.floor(position.get(id)! / chunkSize);
      start(k);
      start(k + 1);
      chunks.delete(k - 2);
      return chunks.get(k)!;
    },
  };
}
