import type { DeliveryToSend } from '../domain/entities/webhooks.js';
import type { WebhookDeliveriesRepo } from '../db/index.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import type { WebhookAttempt } from './webhook-attempt.js';
import { createOutboxLoop } from '../delivery/queue/outbox-loop.js';

/**
 * Drains the webhook delivery queue and makes each delivery's first attempt itself, at once: woken by the
 * NOTIFY of the fan-out trigger, it claims the queued deliveries, counts their attempt and loads them in one
 * statement, and POSTs them concurrently (kept-alive connections, at most `concurrency` at a time). Only the
 * deliveries whose first attempt failed become a workflow (deliver-webhooks.ts), which runs their retries
 * 1 s, 2 s and 4 s later. A workflow per group of events would be most of the latency (workflow start,
 * workflow task, local activity: docs/benchmark.md, "Figures behind the code's choices").
 *
 * Durability: a claimed delivery stays `pending` until its outcome is recorded. A process that dies between
 * claim and record (or between a failure and its workflow's start) leaves it claimed; the sweep finds the
 * claim stale and starts a workflow with the whole schedule for it under the claim's group id. The receiver
 * may then get the event again, which the spec allows (`X-Mail-Delivery-Id` is the same).
 *
 * When every slot is taken (receivers slow to answer) for OVERFLOW_MS, queued deliveries go to workflows
 * with the whole schedule (as the sweep starts them), so a slow receiver delays the others by that at most.
 */
export const WEBHOOK_QUEUE_POLL_MS = 1000;
/** Rounds at least this far apart under load: a round costs one statement whatever it claims. */
const MIN_GAP_MS = 20;
const ROUND_SIZE = 100;
const OVERFLOW_MS = 250;
const OVERFLOW_GROUP_SIZE = 200;
/** Failures gathered this long go to one workflow (their retries are due 1 s after each failure). */
const RETRY_GATHER_MS = 20;
const RETRY_AFTER_MS = 1000;
const SWEEP_MS = 15_000;
/** Longer than an attempt can take (the 10 s limit plus recording it), so the sweep never takes one in flight. */
const STALE_SECONDS = 15;

export interface WebhookDispatcherDeps {
  queue: Pick<
    WebhookDeliveriesRepo,
    'claimForSending' | 'claimGroup' | 'regroup' | 'staleGroups' | 'touchGroup' | 'unclaimGroup'
  >;
  attempt: WebhookAttempt;
  /** Starts the workflow of a group: the whole schedule, or (retryAt) the retries of failed first attempts. */
  startGroup: (groupId: string, ids: string[], retryAt?: Record<string, number>) => Promise<boolean>;
  listen: (channel: string, onNotify: () => void) => Promise<{ unlisten: () => Promise<void> }>;
  channel: string;
  /** How many first attempts may be in flight at once. */
  concurrency: number;
  logger: Logger;
}

export function createWebhookDispatcher(deps: WebhookDispatcherDeps) {
  const { queue, logger } = deps;
  const pool = createPool(deps.concurrency);
  /** Deliveries claimed here and not yet finished or handed to a workflow: the sweep leaves their groups. */
  const held = new Set<string>();
  const retries = createRetryBatcher(deps, held);
  let stopped = false;

  function launch(d: DeliveryToSend): void {
    held.add(d.id);
    pool.run(async () => {
      let failed = false;
      try {
        if (await deps.attempt.admit(d)) failed = (await deps.attempt.send(d, d.attempt)).result === 'failed';
      } catch (err) {
        // Not recorded (the database did not answer): the retries' workflow finds it still pending.
        logger.warn({ err, deliveryId: d.id }, 'webhook attempt could not be recorded; it will be retried');
        failed = true;
      }
      if (failed) retries.add(d.id, Date.now() + RETRY_AFTER_MS);
      else held.delete(d.id);
    });
  }

  /** One round: claims what the free slots can take and launches it; answers whether more may be queued. */
  async function round(): Promise<boolean> {
    for (;;) {
      if (pool.free() === 0 && !(await pool.slotFreed(OVERFLOW_MS))) return overflow();
      const limit = Math.min(pool.free(), ROUND_SIZE);
      const claimed = await queue.claimForSending(newId('webhookGroup'), limit);
      for (const d of claimed) launch(d);
      if (claimed.length < limit) return false;
      if (stopped) return true;
    }
  }

  /** Every slot busy: one group to a workflow with the whole schedule, first attempt included. */
  async function overflow(): Promise<boolean> {
    const groupId = newId('webhookGroup');
    const ids = await queue.claimGroup(groupId, OVERFLOW_GROUP_SIZE);
    if (ids.length === 0) return false;
    try {
      await deps.startGroup(groupId, ids);
    } catch (err) {
      await queue
        .unclaimGroup(groupId)
        .catch((e: unknown) =>
          logger.warn({ err: e, groupId }, 'could not release a group whose workflow did not start'),
        );
      throw err;
    }
    return true;
  }

  /** Claims gone stale (a process died mid-attempt, or a workflow did not start): the whole schedule again. */
  async function sweep(): Promise<void> {
    for (const group of await queue.staleGroups(STALE_SECONDS)) {
      if (group.ids.some((id) => held.has(id))) continue;
      const started = await deps.startGroup(group.groupId, group.ids);
      await queue.touchGroup(group.groupId);
      if (started)
        logger.warn(
          { groupId: group.groupId, entries: group.ids.length },
          'restarted a group of webhook deliveries left unfinished',
        );
    }
  }

  const loop = createOutboxLoop({
    channel: deps.channel,
    listen: deps.listen,
    pollMs: WEBHOOK_QUEUE_POLL_MS,
    minGapMs: () => MIN_GAP_MS,
    round,
    sweep,
    sweepMs: SWEEP_MS,
    name: 'webhook deliveries',
    logger,
  });

  return {
    start: loop.start,
    /** Something was queued in this process: no need to wait for the notification. */
    poke: loop.poke,
    sweep,
    /** Stops claiming, lets the attempts in flight finish and hands their failures to workflows. */
    async stop(): Promise<void> {
      stopped = true;
      await loop.stop();
      await pool.idle();
      await retries.flush();
      await loop.unlisten();
    },
  };
}

/** At most `size` tasks at a time; a task never rejects (each catches its own errors). */
function createPool(size: number) {
  let running = 0;
  const tasks = new Set<Promise<void>>();
  let waiters: (() => void)[] = [];
  const release = () => {
    running -= 1;
    const w = waiters;
    waiters = [];
    for (const fn of w) fn();
  };
  return {
    free: () => size - running,
    run(task: () => Promise<void>): void {
      running += 1;
      const p = task().finally(() => {
        tasks.delete(p);
        release();
      });
      tasks.add(p);
    },
    /** Resolves true as soon as a slot frees, false if none did within `ms`. */
    slotFreed(ms: number): Promise<boolean> {
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), ms);
        waiters.push(() => {
          clearTimeout(timer);
          resolve(true);
        });
      });
    },
    idle: async () => {
      await Promise.all([...tasks]);
    },
  };
}

/** Failed first attempts, gathered briefly, moved to a group of their own and handed to one workflow. */
function createRetryBatcher(deps: Pick<WebhookDispatcherDeps, 'queue' | 'startGroup' | 'logger'>, held: Set<string>) {
  let due: Record<string, number> = {};
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> = Promise.resolve();

  async function handOver(retryAt: Record<string, number>): Promise<void> {
    const ids = Object.keys(retryAt);
    const groupId = newId('webhookGroup');
    try {
      await deps.queue.regroup(groupId, ids);
      await deps.startGroup(groupId, ids, retryAt);
    } catch (err) {
      // Still claimed: the sweep starts their workflow (the whole schedule) once the claim is stale.
      deps.logger.warn(
        { err, groupId, deliveries: ids.length },
        'could not start the retries of webhook deliveries; the sweep will',
      );
    } finally {
      for (const id of ids) held.delete(id);
    }
  }

  const flush = (): Promise<void> => {
    clearTimeout(timer);
    timer = undefined;
    const batch = due;
    due = {};
    if (Object.keys(batch).length > 0) flushing = flushing.then(() => handOver(batch));
    return flushing;
  };

  return {
    add(id: string, at: number): void {
      due[id] = at;
      timer ??= setTimeout(() => void flush(), RETRY_GATHER_MS);
    },
    flush,
  };
}
