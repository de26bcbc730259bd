import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../src/temporal/activities.js';
import type { RetentionRun } from '../src/services/retention-service.js';

// The activity stops itself on its time budget (5 minutes, retention-service.ts); the timeout is a backstop.
const { purgeExpiredData } = proxyActivities<Activities>({
  startToCloseTimeout: '15 minutes',
  retry: { initialInterval: '30 seconds', backoffCoefficient: 2, maximumAttempts: 3 },
});

/** One run of retention (started by its Temporal schedule): answers what it removed. */
export async function purgeExpiredDataWorkflow(): Promise<RetentionRun> {
  return purgeExpiredData();
}
