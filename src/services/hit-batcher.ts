/**
 * Bounds what a flood of tracking hits costs this process, whatever their number: hits of one target (the
 * pixel or one link of an email) that arrive while a statement for that target is running or waiting are
 * folded into the next one as a count, and at most `maxConcurrent` statements run at once. A thousand
 * replays of one URL then cost a couple of statements instead of a thousand connections queued on one row
 * lock, and the rest of the service keeps its share of the database pool.
 *
 * Memory stays bounded too: one waiting batch per target, and no more than `maxWaitingTargets` of them;
 * beyond that a hit is dropped and reported (it takes that many distinct signed URLs hit at once).
 */
export interface HitBatcher<H> {
  /**
   * Adds a hit of `target`; resolves once the batch it joined is written, or failed, or the hit was
   * dropped (both reported to `onError`). Never rejects.
   */
  add(target: string, hit: H): Promise<void>;
}

interface Batch<H> {
  /** The first hit of the batch: the one whose event is recorded, if the batch makes one. */
  hit: H;
  count: number;
  done: Promise<void>;
  resolve: () => void;
}

export class HitDroppedError extends Error {
  constructor(limit: number) {
    super(`tracking hit dropped: ${limit} targets are already waiting to be written`);
    this.name = 'HitDroppedError';
  }
}

export function createHitBatcher<H>(options: {
  /** Writes one batch: its first hit, and how many hits it stands for. */
  write: (hit: H, count: number) => Promise<unknown>;
  maxConcurrent: number;
  maxWaitingTargets: number;
  onError: (err: unknown) => void;
}): HitBatcher<H> {
  const { write, maxConcurrent, maxWaitingTargets, onError } = options;
  /** Batches not started yet, by target; a target has at most one. */
  const waiting = new Map<string, Batch<H>>();
  /** Targets with a statement running: their waiting batch starts after it. */
  const running = new Set<string>();
  /** Targets whose waiting batch may start, oldest first. */
  const ready: string[] = [];

  const pump = () => {
    while (running.size < maxConcurrent && ready.length > 0) {
      const target = ready.shift()!;
      const batch = waiting.get(target)!;
      waiting.delete(target);
      running.add(target);
      void write(batch.hit, batch.count)
        .catch(onError)
        .finally(() => {
          running.delete(target);
          batch.resolve();
          if (waiting.has(target)) ready.push(target);
          pump();
        });
    }
  };

  return {
    add(target, hit) {
      const joined = waiting.get(target);
      if (joined) {
        joined.count++;
        return joined.done;
      }
      if (waiting.size >= maxWaitingTargets) {
        onError(new HitDroppedError(maxWaitingTargets));
        return Promise.resolve();
      }
      let resolve!: () => void;
      const done = new Promise<void>((r) => (resolve = r));
      waiting.set(target, { hit, count: 1, done, resolve });
      if (!running.has(target)) ready.push(target);
      pump();
      return done;
    },
  };
}
