import { Context } from '@temporalio/activity';
import type { BatchRepo } from '../db/repos/batch-repo.js';
import type { ScheduledRepo } from '../db/repos/scheduled-repo.js';
import type { BatchStatus } from '../domain/catalog.js';
import { newId } from '../ids.js';
import type { Metrics } from '../metrics.js';

/**
 * The steps of scheduled emails and batch jobs that touch PostgreSQL; each is safe to run again. They are
 * short database statements, run as local activities (inside the workflow task: no extra round trips to
 * the Temporal server), which is what lets a thousand scheduled emails due at once fire within a second.
 */
export function createJobActivities(deps: {
  scheduled: ScheduledRepo; batches: BatchRepo; notifyQueued: () => void; metrics?: Pick<Metrics, 'scheduledLateness'>;
}) {
  const onLateness = (seconds: number[]) => {
    for (const s of seconds) deps.metrics?.scheduledLateness.observe({ fired_by: 'timer' }, s);
  };
  return {
    /**
     * Fires every scheduled email due in [from, to) (one second): its email is created and queued for
     * delivery, unless it was cancelled first. Temporal's timers are not exact below a second, and emails
     * fall due anywhere within the second: each is fired only once its time has come on the database's
     * clock, so none goes early; this waits within the second for the later ones.
     */
    async fireDueScheduled(input: { from: number; to: number }): Promise<number> {
      const ctx = Context.current();
      const from = new Date(input.from);
      const to = new Date(input.to);
      let fired = 0;
      for (;;) {
        const n = await deps.scheduled.fireDue(from, to, () => newId('email'), { onLateness });
        if (n > 0) {
          fired += n;
          deps.notifyQueued();
          continue;
        }
        const next = await deps.scheduled.nextDue(from, to);
        if (!next) return fired;
        await ctx.sleep(Math.max(1, next.getTime() - Date.now() + 1));
      }
    },

    beginBatch: (input: { jobId: string }): Promise<string[]> => deps.batches.begin(input.jobId),

    finishBatch: (input: { jobId: string }): Promise<BatchStatus | undefined> => deps.batches.finish(input.jobId),
  };
}
export type JobActivities = ReturnType<typeof createJobActivities>;
