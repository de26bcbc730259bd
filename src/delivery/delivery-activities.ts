import crypto from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { transientBounceOutcome } from './outcome/delivery-outcome.js';
import { withLogFields } from '../telemetry/log-context.js';
import { createChunkLoader } from './queue/chunk-loader.js';
import { createEmailSender, type EmailSender, type SendOutcome } from './email-sender.js';
import type { DeliveryDeps } from './delivery-deps.js';
import { pool } from './queue/pool.js';

/** How long an attempt owns its emails without renewing; a killed worker's emails are free after this. */
export const LEASE_SECONDS = 15;
const RENEW_EVERY_MS = 3000;
/**
 * Leases with more left than this are not renewed yet: most emails are sent within seconds of their lease,
 * and one renewed at the next chance still has over 7 s (10 less a renewal interval) left.
 */
const RENEW_BELOW_SECONDS = 10;
/** Emails of one activity in flight at once. */
const SEND_CONCURRENCY = 16;
/** Emails whose content is in memory at once (each may be up to 10 MB). */
const LOAD_CHUNK = 32;
/**
 * Held mail (its destination's queue in this worker was full; nothing was tried) is tried again after these
 * pauses, doubling, for as long as HELD_PATIENCE_MS; what is still held then waits for the retry schedule.
 * A full queue empties at the site's own pace, seconds for a burst: the schedule's first wait (10 s by
 * default) would leave the site idle meanwhile (docs/benchmark.md, "Session 19").
 */
const HELD_FIRST_PAUSE_MS = 100;
const HELD_MAX_PAUSE_MS = 2_000;
const HELD_PATIENCE_MS = 30_000;

export interface DeliverEmailsResult {
  sent: number;
  bounced: number;
  /** Emails that failed temporarily: the workflow retries each on its own schedule. */
  retry: string[];
}

function leaseToken(): string {
  const info = Context.current().info;
  return `${info.workflowExecution?.workflowId ?? 'standalone'}:${info.activityId}:${info.attempt}:${crypto.randomBytes(4).toString('hex')}`;
}

/** Sleeps, heartbeating, until another attempt's lease on some of our emails has run out. */
async function waitOutLease(busyUntil: Date): Promise<void> {
  const ctx = Context.current();
  ctx.heartbeat();
  await ctx.sleep(Math.max(50, busyUntil.getTime() - Date.now() + 50));
}

/**
 * Sends each pending email among `ids` under a lease (waiting out leases a dead earlier attempt still holds);
 * heartbeats and renews the leases while it runs.
 */
async function deliver(deps: DeliveryDeps, sender: EmailSender, ids: string[]): Promise<DeliverEmailsResult> {
  const { emailDeliveries, logger } = deps;
  const ctx = Context.current();
  const token = leaseToken();
  const result: DeliverEmailsResult = { sent: 0, bounced: 0, retry: [] };
  const renew = setInterval(() => {
    ctx.heartbeat();
    emailDeliveries
      .renewLeases(ids, token, { seconds: LEASE_SECONDS, belowSeconds: RENEW_BELOW_SECONDS })
      .catch((err: unknown) => logger.warn({ err }, 'lease renewal failed'));
  }, RENEW_EVERY_MS);
  try {
    let held = await deliverAll(deps, sender, { token, ids, result });
    for (let waited = 0, pause = HELD_FIRST_PAUSE_MS; held.length > 0; pause = Math.min(2 * pause, HELD_MAX_PAUSE_MS)) {
      if (waited >= HELD_PATIENCE_MS) {
        result.retry.push(...held);
        break;
      }
      ctx.heartbeat();
      await ctx.sleep(pause);
      waited += pause;
      held = await deliverAll(deps, sender, { token, ids: held, result });
    }
    return result;
  } finally {
    clearInterval(renew);
  }
}

/** Passes over `ids` until none is leased by a dead earlier attempt; answers the emails held back (deliverPass). */
async function deliverAll(
  deps: DeliveryDeps,
  sender: EmailSender,
  { token, ids, result }: { token: string; ids: string[]; result: DeliverEmailsResult },
): Promise<string[]> {
  const ctx = Context.current();
  const held: string[] = [];
  let remaining = ids;
  for (;;) {
    const pass = await deliverPass(deps, sender, { token, ids: remaining, result, held });
    if (ctx.cancellationSignal.aborted) throw ApplicationFailure.retryable('delivery attempt cancelled');
    if (pass.busyUntil === null) return held;
    remaining = remaining.filter((id) => !pass.leased.has(id));
    await waitOutLease(pass.busyUntil);
  }
}

/**
 * One pass over `ids`. Each chunk is leased, then loaded, just before its sends (one chunk ahead of them), so
 * an email is leased only while its turn is near: leasing a whole group up front had every waiting email's
 * lease renewed every few seconds, a rewrite of its row each time (docs/benchmark.md, "Figures behind the
 * code's choices"). Answers what it leased, and until when another attempt holds the rest.
 */
async function deliverPass(
  deps: DeliveryDeps,
  sender: EmailSender,
  { token, ids, result, held }: { token: string; ids: string[]; result: DeliverEmailsResult; held: string[] },
): Promise<{ leased: Set<string>; busyUntil: Date | null }> {
  const { emailDeliveries } = deps;
  const ctx = Context.current();
  const leased = new Set<string>();
  let busyUntil: Date | null = null;
  const chunks = createChunkLoader(ids, LOAD_CHUNK, async (chunk) => {
    const lease = await emailDeliveries.lease(chunk, token, LEASE_SECONDS);
    for (const id of lease.leased) leased.add(id);
    if (lease.busyUntil !== null && (busyUntil === null || lease.busyUntil > busyUntil)) busyUntil = lease.busyUntil;
    const loaded = await emailDeliveries.loadMany(lease.leased);
    const suppressed = await sender.suppressedAmong(loaded);
    // Every message of the chunk starts building now, ahead of its send (email-sender.ts, prepare).
    return { loaded, prepared: new Map([...loaded].map(([id, l]) => [id, sender.prepare(l, suppressed)])) };
  });
  await pool(ids, SEND_CONCURRENCY, async (id) => {
    // A timed-out attempt learns so from its heartbeat: it must not start more sends.
    if (ctx.cancellationSignal.aborted) {
      if (leased.has(id)) await emailDeliveries.release(token, id, 'attempt cancelled');
      return;
    }
    const { loaded, prepared } = await chunks.chunkOf(id);
    // Not leased: settled already, or another attempt holds it.
    const outcome = await sender.sendOne(token, loaded.get(id), prepared.get(id));
    if (outcome === 'sent') result.sent += 1;
    else if (outcome === 'bounced') result.bounced += 1;
    else if (outcome === 'soft') result.retry.push(id);
    else if (outcome === 'held') held.push(id);
  });
  return { leased, busyUntil };
}

/**
 * Delivery, the one place where email leaves the service. Activities run at least once, so each email is
 * sent under a lease held in PostgreSQL and is skipped once recorded sent or bounced: a retried or
 * duplicated activity never sends an email a second time. The one gap SMTP itself leaves (RFC 1047: a
 * crash after the server has read a message and before the outcome is committed) resends at most the
 * messages in flight, with the same Message-ID: docs/delivery.md, "the duplicate window".
 */
export function createDeliveryActivities(deps: DeliveryDeps, sender: EmailSender = createEmailSender(deps)) {
  const { emailDeliveries } = deps;

  return {
    /** A group of accepted emails: send them all, then take them off the delivery queue. */
    async deliverEmails(input: { emailIds: string[] }): Promise<DeliverEmailsResult> {
      const result = await deliver(deps, sender, input.emailIds);
      await emailDeliveries.dequeue(input.emailIds);
      return result;
    },

    /** One email that failed temporarily; throws (and is retried by Temporal) while it keeps failing. */
    async retryEmail(input: { emailId: string }): Promise<Exclude<SendOutcome, 'held'>> {
      const result = await deliver(deps, sender, [input.emailId]);
      if (result.retry.length > 0)
        throw ApplicationFailure.retryable(`email ${input.emailId} failed temporarily`, 'SoftBounce');
      return result.sent > 0 ? 'sent' : result.bounced > 0 ? 'bounced' : 'skipped';
    },

    /**
     * The retry budget is spent: the email ends bounced (a transient bounce). If a lapsed attempt still
     * holds its lease, this waits the lease out rather than leave the email pending for ever.
     */
    async giveUpEmail(input: { emailId: string }): Promise<void> {
      return withLogFields({ emailId: input.emailId }, () => giveUp(input.emailId));
    },
  };

  async function giveUp(emailId: string): Promise<void> {
    const token = leaseToken();
    for (;;) {
      const { leased, busyUntil } = await emailDeliveries.lease([emailId], token, LEASE_SECONDS);
      if (leased.length > 0) {
        const loaded = (await emailDeliveries.loadMany(leased)).get(emailId);
        if (loaded)
          await sender.finish(
            token,
            transientBounceOutcome(loaded.email, new Date(), loaded.lastError, loaded.answered),
          );
        return;
      }
      if (busyUntil === null) return;
      await waitOutLease(busyUntil);
    }
  }
}
