/**
 * Scheduled emails and batch jobs remember whether their workflow was started, so that a process that
 * died between committing a job and starting its workflow is caught up by the sweep (temporal/job-sweeper).
 */
export const sql = /* sql */ `
ALTER TABLE scheduled_emails ADD COLUMN workflow_started boolean NOT NULL DEFAULT false;
ALTER TABLE batch_jobs ADD COLUMN workflow_started boolean NOT NULL DEFAULT false;
CREATE INDEX scheduled_emails_unstarted ON scheduled_emails (created_at) WHERE NOT workflow_started AND status = 'enqueued';
CREATE INDEX batch_jobs_unstarted ON batch_jobs (created_at) WHERE NOT workflow_started;
`;
