/** An item added to a group commit, and how to answer the caller that added it. */
export interface Waiting<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit: the items added in one turn of the event loop are handed to `writeBatch`, at most `maxBatch`
 * at a time, at the end of that turn; it writes them (one statement) and answers each caller. No item waits
 * for an earlier write to finish, so a lone item is written as soon as it is added. Used for delivery
 * outcomes (delivery/outcome/outcome-writer.ts) and accepted emails (services/accept-writer.ts).
 */
export function groupPerTurn<T, R>(
  maxBatch: number,
  writeBatch: (batch: Waiting<T, R>[]) => Promise<void>,
): (item: T) => Promise<R> {
  let queue: Waiting<T, R>[] = [];
  let scheduled = false;

  function flush(): void {
    scheduled = false;
    const taken = queue;
    queue = [];
    for (let i = 0; i < taken.length; i += maxBatch) void writeBatch(taken.slice(i, i + maxBatch));
  }

  return (item) =>
    new Promise<R>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
}
