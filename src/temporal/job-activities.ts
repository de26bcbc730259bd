import { Context } from '@temporalio/activity';
import type { BatchRepo } from '../db/repos/batch-repo.js';
import type { ScheduledRepo } from '../db/repos/scheduled-repo.js';
import type { BatchStatus } from '../domain/catalog.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';

/**
 * The steps of scheduled emails and batch jobs that touch PostgreSQL; each is safe to run again. They are
 * short database statements, run as local activities (inside the workflow task: no extra round trips to
 * the Temporal server), which is what lets a thousand scheduled emails due at once fire within a second.
 */
/**
 * A second's emails go to delivery in groups of this many, each group's workflow started by the firing
 * itself (not by the dispatcher, one group after another): a burst due at once is delivered by many
 * activities in parallel from the first moment.
 */
const FIRE_GROUP_SIZE = 50;

export interface JobActivityDeps {
  scheduled: ScheduledRepo;
  batches: BatchRepo;
  notifyQueued: () => void;
  /** Starts the delivery workflow of a group of emails already claimed by it (temporal/client.ts). */
  startDeliveryGroup: (groupId: string, emailIds: string[]) => Promise<unknown>;
  /** Gives a group back to the delivery queue when its workflow could not be started. */
  releaseGroup: (groupId: string) => Promise<void>;
  logger: Logger;
}

export function createJobActivities(deps: JobActivityDeps) {
  /** Starts the groups' workflows at once; a group that fails to start goes back to the dispatcher's queue. */
  const handOver = (groups: { groupId: string; emailIds: string[] }[]) => Promise.all(groups.map(async (g) => {
    try {
      await deps.startDeliveryGroup(g.groupId, g.emailIds);
    } catch (err) {
      deps.logger.warn({ err, groupId: g.groupId }, 'could not start the delivery of fired scheduled emails; queued for the dispatcher');
      // If this fails too, the claim goes stale and the dispatcher's sweep starts the group.
      await deps.releaseGroup(g.groupId).catch(() => {});
      deps.notifyQueued();
    }
  }));

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
      const groups = { newGroupId: () => newId('deliveryGroup'), size: FIRE_GROUP_SIZE };
      const starting: Promise<unknown>[] = [];
      for (;;) {
        const batch = await deps.scheduled.fireDueInGroups(from, to, () => newId('email'), groups);
        if (batch.count > 0) {
          fired += batch.count;
          // Started while the next rows fire.
          starting.push(handOver(batch.groups));
          continue;
        }
        const next = await deps.scheduled.nextDue(from, to);
        if (!next) {
          await Promise.all(starting);
          return fired;
        }
        await ctx.sleep(Math.max(1, next.getTime() - Date.now() + 1));
      }
    },

    beginBatch: (input: { jobId: string }): Promise<string[]> => deps.batches.begin(input.jobId),

    finishBatch: (input: { jobId: string }): Promise<BatchStatus | undefined> => deps.batches.finish(input.jobId),
  };
}
export type JobActivities = ReturnType<typeof createJobActivities>;
