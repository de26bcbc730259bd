import { Context } from '@temporalio/activity';
import type { BatchRepo } from '../db/repos/batch-repo.js';
import type { ScheduledRepo } from '../db/repos/scheduled-repo.js';
import type { BatchStatus } from '../domain/catalog.js';
import { newId } from '../ids.js';

/**
 * The steps of scheduled emails and batch jobs that touch PostgreSQL; each is safe to run again. They are
 * short database statements, run as local activities (inside the workflow task: no extra round trips to
 * the Temporal server), which is what lets a thousand scheduled emails due at once fire within a second.
 */
export function createJobActivities(deps: { scheduled: ScheduledRepo; batches: BatchRepo; notifyQueued: () => void }) {
  return {
    /**
     * Creates the scheduled email's email and queues it for delivery, unless it was cancelled. Temporal's
     * timers are not exact below a second: when the start comes early, this waits out the rest on the real
     * clock, so a send never fires early.
     */
    async fireScheduledEmail(input: { scheduledId: string }): Promise<{ emailId: string } | null> {
      const at = await deps.scheduled.scheduledAt(input.scheduledId);
      if (!at) return null;
      const early = at.getTime() - Date.now();
      if (early > 0) await Context.current().sleep(early + 1);
      const emailId = newId('email');
      const fired = await deps.scheduled.fire(input.scheduledId, emailId, (domain) => `<${emailId}@${domain}>`);
      if (fired?.fresh) deps.notifyQueued();
      return fired ? { emailId: fired.emailId } : null;
    },

    beginBatch: (input: { jobId: string }): Promise<string[]> => deps.batches.begin(input.jobId),

    finishBatch: (input: { jobId: string }): Promise<BatchStatus | undefined> => deps.batches.finish(input.jobId),
  };
}
export type JobActivities = ReturnType<typeof createJobActivities>;
