import { Context } from '@temporalio/activity';
import type { BatchRepo } from '../db/index.js';
import type { ScheduledRepo } from '../db/index.js';
import type { BatchStatus } from '../domain/catalog.js';
import { newId } from '../ids.js';
import type { Metrics } from '../metrics.js';
import type { ScheduledPreparer } from '../delivery/message/scheduled-preparer.js';

/**
 * The steps of scheduled emails and batch jobs that touch PostgreSQL; each is safe to run again. They are
 * short database statements, run as local activities (inside the workflow task: no extra round trips to
 * the Temporal server), which is what lets a thousand scheduled emails due at once fire within a second.
 */
export function createJobActivities(deps: {
  scheduled: ScheduledRepo;
  batches: BatchRepo;
  notifyQueued: () => void;
  metrics?: Pick<Metrics, 'scheduledLateness'>;
  /** Builds the messages of the scheduled emails due in a window ahead of time (scheduled-preparer.ts); absent: nothing is. */
  preparer?: ScheduledPreparer;
}) {
  const onLateness = (seconds: number[]) => {
    for (const s of seconds) deps.metrics?.scheduledLateness.observe({ fired_by: 'timer' }, s);
  };
  return {
    /**
     * Builds and signs, before they are due, the messages of the scheduled emails due in [from, to), until
     * `until` at the latest (what is not built by then is built when sent). Answers, for each scheduled
     * email whose message is kept, the id its email is to have (the message names it), and how long from
     * now until `from`.
     */
    async prepareScheduled(input: {
      from: number;
      to: number;
      until: number;
    }): Promise<{ prepared: Record<string, string>; waitMs: number }> {
      const prepared = deps.preparer
        ? await deps.preparer.prepare(new Date(input.from), new Date(input.to), input.until)
        : new Map<string, string>();
      return { prepared: Object.fromEntries(prepared), waitMs: input.from - Date.now() };
    },

    /**
     * Fires every scheduled email due in [from, to) (one second): its email is created and queued for
     * delivery, unless it was cancelled first; one whose message was built ahead gets the id in `prepared`.
     * Temporal's timers are not exact below a second, and emails fall due anywhere within the second: each
     * is fired only once its time has come on the database's clock, so none goes early; this waits within
     * the second for the later ones.
     */
    async fireDueScheduled(input: { from: number; to: number; prepared?: Record<string, string> }): Promise<number> {
      const ctx = Context.current();
      const from = new Date(input.from);
      const to = new Date(input.to);
      const prepared = new Map(Object.entries(input.prepared ?? {}));
      const emailIdOf = (scheduledId: string) => prepared.get(scheduledId) ?? newId('email');
      const fired = new Set<string>();
      try {
        for (;;) {
          const ids = await deps.scheduled.fireDue(from, to, emailIdOf, { onLateness });
          if (ids.length > 0) {
            for (const id of ids) fired.add(id);
            deps.notifyQueued();
            continue;
          }
          const next = await deps.scheduled.nextDue(from, to);
          if (!next) return fired.size;
          await ctx.sleep(Math.max(1, next.getTime() - Date.now() + 1));
        }
      } finally {
        // The messages of emails cancelled meanwhile will not be sent.
        deps.preparer?.forget([...prepared.values()].filter((id) => !fired.has(id)));
      }
    },

    beginBatch: (input: { jobId: string }): Promise<string[]> => deps.batches.begin(input.jobId),

    finishBatch: (input: { jobId: string }): Promise<BatchStatus | undefined> => deps.batches.finish(input.jobId),
  };
}
