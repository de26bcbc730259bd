// Every workflow the worker runs. Workflow code runs in Temporal's sandbox: deterministic, no I/O.
export { batchJobWorkflow } from './batch-job.js';
export { deliverEmailsWorkflow } from './deliver-emails.js';
export { scheduledSecondWorkflow } from './scheduled-email.js';
export { deliverWebhooksWorkflow } from './deliver-webhooks.js';
export { recheckDomainsWorkflow } from './recheck-domains.js';
export { purgeExpiredDataWorkflow } from './purge-expired-data.js';
