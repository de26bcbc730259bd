import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../src/temporal/activities.js';

// DNS lookups of many domains: a regular activity (its own timeout, on any worker), retried a little.
const { recheckDomains } = proxyActivities<Activities>({
  startToCloseTimeout: '15 minutes',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumAttempts: 3 },
});

/** One run of the periodic DNS re-check (started by its Temporal schedule): answers how many domains it checked. */
export async function recheckDomainsWorkflow(): Promise<number> {
  return recheckDomains();
}
