import type { Sql } from '../db/sql.js';
import type { Logger } from '../logger.js';
import { QUEUE_CHANNEL, type Dispatcher } from '../delivery/queue/dispatcher.js';

/**
 * At most one NOTIFY per this many milliseconds. A dispatcher drains at most every 250 ms under load
 * (dispatcher.ts, EMAIL_GROUPS) and remembers a notification that arrives while it waits, so NOTIFYs closer
 * together than that wake nobody sooner. Each one costs a statement, a commit under NOTIFY's global lock and
 * a wake-up of every listening process: at 250 sends a second, one per send was most of the statements of
 * an accept beside its own (docs/benchmark.md, "Session 22").
 */
export const NOTIFY_WINDOW_MS = 100;

/**
 * Tells dispatchers that the queue has new entries: directly when one runs in this process, and by NOTIFY
 * for the others. The first entry after a quiet spell is notified at once; entries within the next
 * NOTIFY_WINDOW_MS share one NOTIFY at the window's end, so a lone send waits for nothing and a busy API sends
 * ten a second however many emails arrive.
 */
export function createQueueNotifier(
  sql: Pick<Sql, 'notify'>,
  local: Pick<Dispatcher, 'poke'> | undefined,
  logger: Pick<Logger, 'warn'>,
  windowMs = NOTIFY_WINDOW_MS,
): () => void {
  /** A NOTIFY went out less than windowMs ago. */
  let windowOpen = false;
  /** Entries were queued since that NOTIFY: one more is owed at the window's end. */
  let owed = false;

  function notify(): void {
    windowOpen = true;
    // A lost NOTIFY costs latency only: every dispatcher also polls the queue each second.
    sql
      .notify(QUEUE_CHANNEL, '')
      .catch((err: unknown) => logger.warn({ err }, 'queue NOTIFY failed; dispatchers will poll'));
    setTimeout(windowEnds, windowMs).unref();
  }

  function windowEnds(): void {
    windowOpen = false;
    if (!owed) return;
    owed = false;
    notify();
  }

  return () => {
    local?.poke();
    if (windowOpen) owed = true;
    else notify();
  };
}
