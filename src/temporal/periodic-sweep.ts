import type { Logger } from '../logger.js';

const SWEEP_MS = 15_000;

/**
 * The worker's housekeeping timer: every SWEEP_MS it runs its steps in order (recovering jobs, forgetting
 * expired Idempotency-Keys, judging account health). A step that fails ends that round, logged; the next
 * round starts afresh.
 */
export function createPeriodicSweep(deps: { steps: ReadonlyArray<() => Promise<unknown>>; logger: Logger }) {
  let timer: NodeJS.Timeout | undefined;

  async function sweep(): Promise<void> {
    for (const step of deps.steps) await step();
  }

  return {
    start(): void {
      timer = setInterval(() => {
        sweep().catch((err: unknown) => deps.logger.warn({ err }, 'job sweep failed'));
      }, SWEEP_MS);
      timer.unref();
    },
    stop(): void {
      clearInterval(timer);
    },
  };
}
