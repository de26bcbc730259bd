import type { Logger } from '../../logger.js';

export interface OutboxLoopOptions {
  /** The NOTIFY channel writers of the outbox signal, and how to listen to it. */
  channel: string;
  listen: (channel: string, onNotify: () => void) => Promise<{ unlisten: () => Promise<void> }>;
  /** The longest wait without a notification (a lost NOTIFY costs at most this). */
  pollMs: number;
  /** Rounds at least this far apart under load, so that what arrives meanwhile is taken together (asked before each round). */
  minGapMs: () => number;
  /** One round over the outbox; true when more is waiting at once. Throwing retries with a backoff. */
  round: () => Promise<boolean>;
  /** Claims gone stale, every `sweepMs`. */
  sweep: () => Promise<void>;
  sweepMs: number;
  /** What the outbox holds, for logs ("emails", "webhook deliveries"). */
  name: string;
  logger: Logger;
}

/**
 * The life of an outbox dispatcher, shared by the email and webhook ones: woken by NOTIFY (or a poke from
 * this process, or the poll), rounds at least `minGapMs` apart, a backoff while rounds fail, a periodic
 * sweep; stop lets the round in progress end.
 */
export function createOutboxLoop(o: OutboxLoopOptions) {
  const wake = createWake();
  let stopped = false;
  let loop: Promise<void> | undefined;
  let sweepTimer: NodeJS.Timeout | undefined;
  let listener: { unlisten: () => Promise<void> } | undefined;

  async function run(): Promise<void> {
    let backoff = 250;
    let lastRound = 0;
    while (!stopped) {
      await wake.wait(o.pollMs);
      const gap = lastRound + o.minGapMs() - Date.now();
      if (gap > 0) await new Promise((r) => setTimeout(r, gap).unref());
      if (stopped) return;
      lastRound = Date.now();
      try {
        if (await o.round()) wake.poke();
        backoff = 250;
      } catch (err) {
        o.logger.warn({ err }, `dispatcher could not hand ${o.name} out; retrying`);
        wake.poke();
        await new Promise((r) => setTimeout(r, backoff).unref());
        backoff = Math.min(backoff * 2, 5000);
      }
    }
  }

  return {
    async start(): Promise<void> {
      listener = await o.listen(o.channel, wake.poke);
      loop = run();
      sweepTimer = setInterval(() => {
        o.sweep().catch((err: unknown) => o.logger.warn({ err }, `sweep of ${o.name} failed`));
      }, o.sweepMs);
      sweepTimer.unref();
    },
    /** Something was queued in this process: no need to wait for the notification. */
    poke: wake.poke,
    /** Ends the loop after its round in progress; the caller finishes its own work, then `unlisten`. */
    async stop(): Promise<void> {
      stopped = true;
      clearInterval(sweepTimer);
      wake.poke();
      await loop;
    },
    async unlisten(): Promise<void> {
      await listener?.unlisten().catch((err: unknown) => o.logger.warn({ err }, 'UNLISTEN at stop failed'));
    },
  };
}

/** A flag set by notifications, and a wait for it bounded by the poll interval. */
function createWake() {
  let pending = true;
  let resolveWait: (() => void) | undefined;
  return {
    poke: () => {
      pending = true;
      resolveWait?.();
    },
    async wait(pollMs: number): Promise<void> {
      if (!pending) {
        await new Promise<void>((resolve) => {
          resolveWait = resolve;
          setTimeout(resolve, pollMs).unref();
        });
        resolveWait = undefined;
      }
      pending = false;
    },
  };
}
