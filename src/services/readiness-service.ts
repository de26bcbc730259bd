import type { Logger } from '../logger.js';

/** The dependencies /readyz reports on, by the names its answer uses. */
export type Component = 'database' | 'temporal';

/** A probe that has not answered in this long counts as down (a blackholed host would hold it ~10 s). */
export const PROBE_TIMEOUT_MS = 3_000;

/**
 * Readiness: which dependencies do not answer. The probe's answer names them only; the reason (addresses,
 * driver messages) goes to the log, as it is no business of whoever can reach /readyz.
 */
export function createReadiness(probes: Record<Component, () => Promise<unknown>>, logger: Logger) {
  return {
    /** The components that failed their probe, in a fixed order; empty when ready. */
    async down(): Promise<Component[]> {
      const entries = Object.entries(probes) as [Component, () => Promise<unknown>][];
      const results = await Promise.all(
        entries.map(async ([name, probe]) => {
          try {
            let timer: NodeJS.Timeout | undefined;
            const timeout = new Promise<never>((_, reject) => {
              timer = setTimeout(() => reject(new Error(`no answer in ${PROBE_TIMEOUT_MS} ms`)), PROBE_TIMEOUT_MS);
            });
            await Promise.race([probe(), timeout]).finally(() => clearTimeout(timer));
            return undefined;
          } catch (err) {
            logger.warn({ err, component: name }, 'readiness probe failed');
            return name;
          }
        }),
      );
      return results.filter((r): r is Component => r !== undefined);
    },
  };
}
