// Every workflow the worker runs. Workflow code runs in Temporal's sandbox: deterministic, no I/O.
export { deliverEmailsWorkflow } from './deliver-emails.js';
