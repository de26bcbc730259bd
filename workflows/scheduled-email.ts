import { proxyActivities } from '@temporalio/workflow';
import type { JobActivities } from '../src/temporal/job-activities.js';
import { deliverAll } from './deliver-emails.js';

const { fireScheduledEmail } = proxyActivities<JobActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/**
 * One scheduled email. Started with a delayed start at `scheduled_at` (nothing is held in worker memory
 * while it waits); its workflow id is the scheduled email's id. Firing creates the email unless the
 * scheduled email was cancelled first: the row's state decides that race, atomically.
 */
export async function scheduledEmailWorkflow(input: { scheduledId: string }): Promise<'sent' | 'cancelled'> {
  const fired = await fireScheduledEmail({ scheduledId: input.scheduledId });
  if (!fired) return 'cancelled';
  await deliverAll([fired.emailId]);
  return 'sent';
}
