import { proxyLocalActivities } from '@temporalio/workflow';
import type { JobActivities } from '../src/temporal/job-activities.js';

const { fireScheduledEmail } = proxyLocalActivities<JobActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/**
 * One scheduled email. Started with a delayed start at `scheduled_at` (nothing is held in worker memory
 * while it waits); its workflow id is the scheduled email's id. Firing creates the email and puts it in the
 * delivery queue, unless the scheduled email was cancelled first (the row's state decides that race,
 * atomically); delivery then goes as for any direct send, grouped with others due at the same time.
 * The whole workflow is one workflow task.
 */
export async function scheduledEmailWorkflow(input: { scheduledId: string }): Promise<'fired' | 'cancelled'> {
  const fired = await fireScheduledEmail({ scheduledId: input.scheduledId });
  return fired ? 'fired' : 'cancelled';
}
