import type { Sql } from '../db/sql.js';
import type { Logger } from '../logger.js';
import { QUEUE_CHANNEL, type Dispatcher } from '../delivery/queue/dispatcher.js';

/**
 * Tells dispatchers that the queue has new entries: directly when one runs in this process, and by NOTIFY
 * for the others, at most one NOTIFY per few milliseconds however many emails arrive (NOTIFY takes a
 * global lock at commit).
 */
export function createQueueNotifier(sql: Sql, local: Dispatcher | undefined, logger: Logger): () => void {
  const WINDOW_MS = 5;
  let scheduled = false;
  return () => {
    local?.poke();
    if (scheduled) return;
    scheduled = true;
    setTimeout(() => {
      scheduled = false;
      // A lost NOTIFY costs latency only: every dispatcher also polls the queue each second.
      sql
        .notify(QUEUE_CHANNEL, '')
        .catch((err: unknown) => logger.warn({ err }, 'queue NOTIFY failed; dispatchers will poll'));
    }, WINDOW_MS).unref();
  };
}
