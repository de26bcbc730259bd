import type { Logger } from '../logger.js';

/**
 * Retries a workflow start that failed (Temporal down or slow) in the background, 1, 2, 4 ... up to 10 s
 * apart, until it succeeds: a job committed during an outage starts within seconds of Temporal answering
 * again rather than at the next sweep. Starts use business workflow ids, so a start that did land after
 * all is refused harmlessly on retry. The sweep stays the safety net for a process that dies meanwhile.
 */
export const START_RETRY_FIRST_MS = 1_000;
export const START_RETRY_MAX_MS = 10_000;
/** Jobs retried at once per process; beyond that a long outage's backlog is left to the sweep. */
export const START_RETRY_MAX_PENDING = 10_000;

export function createStartRetrier(options: { logger: Logger; firstDelayMs?: number; maxDelayMs?: number }) {
  const { logger } = options;
  const first = options.firstDelayMs ?? START_RETRY_FIRST_MS;
  const max = options.maxDelayMs ?? START_RETRY_MAX_MS;
  /** Keys waiting or in flight, so that one job has one retry loop. */
  const active = new Set<string>();
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;

  function schedule(key: string, start: () => Promise<void>, delay: number): void {
    const timer = setTimeout(() => {
      timers.delete(timer);
      start().then(
        () => {
          active.delete(key);
          logger.info({ job: key }, 'workflow started after retrying');
        },
        (err: unknown) => {
          if (stopped) {
            active.delete(key);
            return;
          }
          const next = Math.min(delay * 2, max);
          logger.warn({ err, job: key, retryInMs: next }, 'workflow start failed again; retrying');
          schedule(key, start, next);
        },
      );
    }, delay);
    timer.unref();
    timers.add(timer);
  }

  return {
    /** Retries `start` until it resolves; a key already being retried is left to that loop. */
    retry(key: string, start: () => Promise<void>): void {
      if (stopped || active.has(key)) return;
      if (active.size >= START_RETRY_MAX_PENDING) {
        logger.warn({ job: key }, 'too many workflow starts being retried; this one is left to the sweep');
        return;
      }
      active.add(key);
      schedule(key, start, first);
    },
    pending: () => active.size,
    stop(): void {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      active.clear();
    },
  };
}
export type StartRetrier = ReturnType<typeof createStartRetrier>;
