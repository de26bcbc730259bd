import type { Logger } from '../logger.js';

/** The dependencies /readyz reports on, by the names its answer uses. */
export type Component = 'database' | 'temporal';

/**
 * Readiness: which dependencies do not answer. The probe's answer names them only; the reason (addresses,
 * driver messages) goes to the log, as it is no business of whoever can reach /readyz.
 */
export function createReadiness(probes: Record<Component, () => Promise<unknown>>, logger: Logger) {
  return {
    /** The components that failed their probe, in a fixed order; empty when ready. */
    async down(): Promise<Component[]> {
      const entries = Object.entries(probes) as [Component, () => Promise<unknown>][];
      const results = await Promise.all(entries.map(async ([name, probe]) => {
        try {
          await probe();
          return undefined;
        } catch (err) {
          logger.warn({ err, component: name }, 'readiness probe failed');
          return name;
        }
      }));
      return results.filter((r): r is Component => r !== undefined);
    },
  };
}
