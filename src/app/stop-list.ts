import type { Logger } from '../logger.js';

/**
 * What a start has to undo, in reverse order of starting: each part registers its own stop as soon as it
 * runs, so a start that fails halfway stops exactly what it had started.
 */
export interface StopList {
  onStop(fn: () => Promise<void>): void;
  /** Runs every registered stop once, latest first; a stop that fails is logged and the rest still run. */
  stop(): Promise<void>;
}

export function createStopList(logger: Logger): StopList {
  const cleanups: (() => Promise<void>)[] = [];
  return {
    onStop: (fn) => {
      cleanups.unshift(fn);
    },
    stop: async () => {
      for (const fn of cleanups.splice(0)) {
        await fn().catch((err: unknown) => logger.warn({ err }, 'error while stopping'));
      }
    },
  };
}
