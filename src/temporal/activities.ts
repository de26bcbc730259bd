import type { createDeliveryActivities } from '../delivery/delivery-activities.js';
import type { createWebhookActivities } from '../webhooks/webhook-activities.js';
import type { createDomainActivities } from './domain-activities.js';
import type { createJobActivities } from './job-activities.js';
import type { createRetentionActivities } from './retention-activities.js';

/**
 * Every activity of the worker, by name: the one type the worker registers (app/start-worker-role.ts spreads
 * these factories' objects into one) and every workflow proxies. An activity a workflow names that no factory
 * makes, or calls with other arguments, is a type error; so are two factories making one name differently.
 */
export type Activities = ReturnType<typeof createDeliveryActivities> &
  ReturnType<typeof createWebhookActivities> &
  ReturnType<typeof createJobActivities> &
  ReturnType<typeof createDomainActivities> &
  ReturnType<typeof createRetentionActivities>;
