import type { Logger } from './logger.js';

/**
 * A process whose database or Temporal is down when it starts waits for them, retrying with backoff and
 * logging each failure, instead of exiting: dependencies restarted together (a host reboot, `docker compose
 * up`) come up in any order. Only failures `isTransient` recognises are retried; anything else (a wrong
 * password, an unknown namespace) is a configuration error and ends the start at once.
 */
export const START_RETRY_FIRST_MS = 1_000;
export const START_RETRY_MAX_MS = 10_000;

export async function retryAtStart<T>(options: {
  /** What is waited for, for the log ("database", "Temporal"). */
  what: string;
  attempt: () => Promise<T>;
  isTransient: (err: unknown) => boolean;
  logger: Logger;
  /** Tests shorten the waits. */
  firstDelayMs?: number;
}): Promise<T> {
  let delay = options.firstDelayMs ?? START_RETRY_FIRST_MS;
  for (let attempt = 1; ; attempt += 1) {
    try {
      const result = await options.attempt();
      if (attempt > 1) options.logger.info({ attempts: attempt }, `${options.what} reachable; starting`);
      return result;
    } catch (err) {
      if (!options.isTransient(err)) throw err;
      options.logger.warn({ err, attempt, retryInMs: delay }, `${options.what} unreachable at start; retrying`);
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, START_RETRY_MAX_MS);
    }
  }
}
