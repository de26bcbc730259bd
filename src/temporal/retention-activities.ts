import type { RetentionPolicy, RetentionRun, RetentionService } from '../services/retention-service.js';

/** Retention's one side effect: the batched deletes of what is past the configured days (retention-service.ts). */
export function createRetentionActivities(deps: { retention: Pick<RetentionService, 'run'>; policy: RetentionPolicy }) {
  return {
    purgeExpiredData: (): Promise<RetentionRun> => deps.retention.run(deps.policy),
  };
}
