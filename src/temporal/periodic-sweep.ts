import type { Logger } from '../logger.js';

const SWEEP_MS = 15_000;

/**
 * The worker's housekeeping timer: every SWEEP_MS it runs its steps in order (recovering jobs, forgetting
 * expired Idempotency-Keys, judging account health). A step that fails ends that round, logged; the next
 * round starts afresh.
 */
export function createPeriodicSweep(deps: {
  steps: ReadonlyArray<() => Promise<unknown>>;
  logger: Logger;
  /** How often; SWEEP_MS unless given. */
  everyMs?: number;
  /** What the warning of a failed round calls it. */
  name?: string;
}) {
  let timer: NodeJS.Timeout | undefined;
  // A round still running when the next is due: that one is skipped, so rounds never pile up.
  let running = false;

  async function sweep(): Promise<void> {
    if (running) return;
    running = true;
    try {
      for (const step of deps.steps) await step();
    } finally {
      running = false;
    }
  }

  return {
    start(): void {
      timer = setInterval(() => {
        sweep().catch((err: unknown) => deps.logger.warn({ err }, `${deps.name ?? 'job sweep'} failed`));
      }, deps.everyMs ?? SWEEP_MS);
      timer.unref();
    },
    stop(): void {
      clearInterval(timer);
    },
  };
}
