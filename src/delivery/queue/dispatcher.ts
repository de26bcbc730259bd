import type { ClaimedGroup } from '../../domain/entities/delivery.js';
import { type IdKind, newId } from '../../ids.js';
import type { Logger } from '../../logger.js';
import { createOutboxLoop } from './outbox-loop.js';

/**
 * Drains a PostgreSQL outbox (the email delivery queue, the webhook delivery queue) into workflows, a group
 * of entries per workflow. Under load more entries pile up while a start is in flight, so groups grow by
 * themselves and the number of workflow starts stays within what Temporal takes. It wakes on NOTIFY and
 * polls as a fallback.
 *
 * A group whose workflow was never started (the dispatcher died between claim and start) is found by the
 * sweep and started again under the same workflow id, so a repeated start is harmless.
 */
export const QUEUE_CHANNEL = 'mailer_delivery_queue';
const GROUP_SIZE = 200;
const POLL_MS = 1000;
/**
 * Under load, drains are at least this far apart, so that entries gather into groups instead of costing a
 * workflow start each (docs/benchmark.md, "Figures behind the code's choices"). After a quiet spell the first
 * entry goes at once.
 */
const MIN_GAP_MS = 100;
/**
 * Emails' groups: a workflow costs the same whatever its size, so under load the email dispatcher waits longer
 * and takes more at once. Once a round takes 25 emails or more (100 a second at the short gap) the next waits
 * 500 ms, for groups of up to 1,000; below that, 250 ms, so light traffic is not held longer. At 170 emails a
 * second the longer gap halved the workflows (38-40 to 70-85 emails each) and Temporal's CPU (22 to 12-13 % of
 * a core), about a tenth of the machine's busy time, with no accept or delivery slower (docs/benchmark.md,
 * "Session 27", and "Figures behind the code's choices"). After a quiet spell the first email still goes at once.
 */
export const EMAIL_GROUPS: Groups = { size: 1000, minGapMs: 250, busy: { claimed: 25, gapMs: 500 } };
const SWEEP_MS = 15_000;
/**
 * How old a claim must be before the sweep starts its group again. A start takes milliseconds and starting
 * again is harmless (same workflow id), so this only bounds how long a crash between claim and start
 * delays those emails (about this plus SWEEP_MS); each sweep costs one start RPC per group still queued.
 */
const STALE_SECONDS = 15;

/** An outbox whose entries are claimed in groups, each group handed to one workflow. */
export interface GroupQueue {
  claimGroup(groupId: string, limit: number): Promise<string[]>;
  staleGroups(olderThanSeconds: number): Promise<ClaimedGroup[]>;
  unclaimGroup(groupId: string): Promise<void>;
  touchGroup(groupId: string): Promise<void>;
}

export interface DispatcherDeps {
  /** What the queue holds, for logs ("emails", "webhook deliveries"). */
  name: string;
  queue: GroupQueue;
  /** The NOTIFY channel writers of the queue signal. */
  channel: string;
  /** The id kind of a group (its workflow id). */
  groupKind: IdKind;
  /** Starts the workflow of a group; resolves whether it was new (false: already started). */
  startGroup: (groupId: string, ids: string[]) => Promise<boolean>;
  listen: (channel: string, onNotify: () => void) => Promise<{ unlisten: () => Promise<void> }>;
  logger: Logger;
  /** Most entries per group, and the least gap between drains under load (defaults: 200, 100 ms). */
  groups?: Groups;
}

export interface Groups {
  size: number;
  minGapMs: number;
  /** A longer gap after a round that claimed at least `claimed` entries. */
  busy?: { claimed: number; gapMs: number };
}

export function createDispatcher(deps: DispatcherDeps) {
  const sweep = () => sweepStale(deps);
  const { groups } = deps;
  let lastClaimed = 0;
  const minGapMs = () =>
    groups?.busy && lastClaimed >= groups.busy.claimed ? groups.busy.gapMs : (groups?.minGapMs ?? MIN_GAP_MS);
  const loop = createOutboxLoop({
    channel: deps.channel,
    listen: deps.listen,
    pollMs: POLL_MS,
    minGapMs,
    round: async () => {
      lastClaimed = await drain(deps);
      return false;
    },
    sweep,
    sweepMs: SWEEP_MS,
    name: deps.name,
    logger: deps.logger,
  });
  return {
    start: loop.start,
    /** Something was queued in this process: no need to wait for the notification. */
    poke: loop.poke,
    sweep,
    async stop(): Promise<void> {
      await loop.stop();
      await loop.unlisten();
    },
  };
}
export type Dispatcher = ReturnType<typeof createDispatcher>;

/** Hands out every group waiting; answers how many entries it claimed. */
async function drain(deps: DispatcherDeps): Promise<number> {
  const { queue, logger } = deps;
  const size = deps.groups?.size ?? GROUP_SIZE;
  let claimed = 0;
  for (;;) {
    const groupId = newId(deps.groupKind);
    const ids = await queue.claimGroup(groupId, size);
    claimed += ids.length;
    if (ids.length === 0) return claimed;
    try {
      await deps.startGroup(groupId, ids);
    } catch (err) {
      // If this fails too, the claim goes stale and the sweep hands the group out again.
      await queue
        .unclaimGroup(groupId)
        .catch((e: unknown) =>
          logger.warn({ err: e, groupId }, 'could not release a group whose workflow did not start'),
        );
      throw err;
    }
    if (ids.length < size) return claimed;
  }
}

async function sweepStale(deps: DispatcherDeps): Promise<void> {
  const { queue, logger } = deps;
  for (const group of await queue.staleGroups(STALE_SECONDS)) {
    const started = await deps.startGroup(group.groupId, group.ids);
    await queue.touchGroup(group.groupId);
    if (started)
      logger.warn(
        { groupId: group.groupId, entries: group.ids.length },
        `restarted a group of ${deps.name} left unstarted`,
      );
  }
}
