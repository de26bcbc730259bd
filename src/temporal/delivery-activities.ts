import crypto from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { EmailDeliveriesRepo, DeliveryOutcome, LoadedEmail } from '../db/repos/email-deliveries-repo.js';
import type { SuppressionsRepo } from '../db/repos/suppressions-repo.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { composeMessage } from '../mail/compose.js';
import {
  deliveredOutcome, hardBounceOutcome, recipientsOf, rejectedOutcome, suppressedOutcome, transientBounceOutcome,
} from '../mail/delivery-outcome.js';
import { classifySmtpError, rejectedRecipients } from '../mail/smtp-outcome.js';
import type { MailTransport } from '../mail/transport.js';

/**
 * Delivery, the one place where email leaves the service. Activities run at least once, so each email is
 * sent under a lease held in PostgreSQL and is skipped once recorded sent or bounced: a retried or
 * duplicated activity never sends an email a second time. The one gap SMTP itself leaves (RFC 1047: a
 * crash after the server has read a message and before the outcome is committed) resends at most the
 * messages in flight, with the same Message-ID: README, "the duplicate window".
 */

/** How long an attempt owns its emails without renewing; a killed worker's emails are free after this. */
export const LEASE_SECONDS = 15;
const RENEW_EVERY_MS = 3000;
/** Emails of one activity in flight at once. */
const SEND_CONCURRENCY = 16;
/** Emails whose content is in memory at once (each may be up to 10 MB). */
const LOAD_CHUNK = 32;

export interface DeliveryDeps {
  emailDeliveries: EmailDeliveriesRepo;
  suppressions: Pick<SuppressionsRepo, 'matching'>;
  transport: MailTransport;
  /** Adds the open pixel and rewrites links of HTML mail from domains that track. */
  rewriteForTracking: (html: string, emailId: string, opts: { open: boolean; click: boolean }) => string;
  /** The signed token (report-token.ts) every message carries, so reports about it can prove they are genuine. */
  reportToken: (emailId: string) => string;
  /** Lets the health policy judge an account after a counted bounce. */
  judgeAccount: (accountId: string) => Promise<unknown>;
  logger: Logger;
  metrics: Pick<Metrics, 'deliveries'>;
}

export type SendOutcome = 'sent' | 'bounced' | 'soft' | 'skipped';

export interface DeliverEmailsResult {
  sent: number;
  bounced: number;
  /** Emails that failed temporarily: the workflow retries each on its own schedule. */
  retry: string[];
}

function leaseToken(): string {
  const info = Context.current().info;
  return `${info.workflowExecution?.workflowId ?? "standalone"}:${info.activityId}:${info.attempt}:${crypto.randomBytes(4).toString('hex')}`;
}

async function pool<T>(items: T[], size: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(size, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  });
  await Promise.all(lanes);
}

export function createDeliveryActivities(deps: DeliveryDeps) {
  const { emailDeliveries, transport, logger } = deps;

  /** Records an outcome; a counted bounce lets the health policy judge the account. */
  async function finish(token: string, outcome: DeliveryOutcome): Promise<void> {
    const recorded = await emailDeliveries.recordOutcome(token, outcome);
    const counted = outcome.events.some((e) => e.type === 'bounce' && (e.data as { bounce_subtype?: string }).bounce_subtype !== 'Suppressed');
    if (recorded && counted) {
      await deps.judgeAccount(recorded.accountId).catch((err: unknown) => logger.warn({ err, accountId: recorded.accountId }, 'health evaluation failed'));
    }
  }

  async function sendOne(token: string, loaded: LoadedEmail | undefined, suppressed: Set<string>): Promise<SendOutcome> {
    if (!loaded || loaded.email.status !== 'pending') return 'skipped';
    const { email, sender } = loaded;
    // An account paused or banned after accepting this email sends nothing more.
    if (sender.accountStatus === 'paused' || sender.accountStatus === 'banned') {
      await finish(token, rejectedOutcome(email, new Date(), `account ${sender.accountStatus}`));
      return 'bounced';
    }
    const recipients = recipientsOf(email);
    const skipped = recipients.filter((r) => suppressed.has(`${email.accountId} ${r}`));
    if (skipped.length === recipients.length) {
      await finish(token, suppressedOutcome(email, new Date(), skipped));
      return 'bounced';
    }
    const tracked = email.html !== '' && (sender.openTracking || sender.clickTracking)
      ? { ...email, html: deps.rewriteForTracking(email.html, email.id, { open: sender.openTracking, click: sender.clickTracking }) }
      : email;
    const envelopeTo = recipients.filter((r) => !skipped.includes(r));
    const message = composeMessage(tracked, loaded.attachments, { envelopeTo, reportToken: deps.reportToken(email.id) });
    const handedAt = new Date();
    try {
      const info = await transport.send(message);
      await finish(token, deliveredOutcome(email, {
        handedAt, acceptedAt: new Date(), messageId: info.messageId, response: info.response,
        accepted: info.accepted.map(String), refused: rejectedRecipients(info), suppressed: skipped,
      }));
      return 'sent';
    } catch (err) {
      const failure = classifySmtpError(err);
      if (failure.kind === 'hard') {
        await finish(token, hardBounceOutcome(email, handedAt, failure, rejectedRecipients(err as object), envelopeTo));
        logger.info({ emailId: email.id, code: failure.code, status: failure.status }, 'email refused permanently');
        return 'bounced';
      }
      await emailDeliveries.release(token, email.id, failure.diagnostic);
      logger.warn({ emailId: email.id, code: failure.code, diagnostic: failure.diagnostic }, 'email failed temporarily');
      return 'soft';
    }
  }

  /** Of the recipients of `loaded`, those suppressed for their account (one query per chunk). */
  async function suppressedAmong(loaded: Map<string, LoadedEmail>): Promise<Set<string>> {
    const emails = [...loaded.values()].map((l) => l.email);
    return deps.suppressions.matching([...new Set(emails.map((e) => e.accountId))], [...new Set(emails.flatMap(recipientsOf))]);
  }

  /**
   * Leases the pending emails among `ids` (waiting out leases of a dead earlier attempt) and sends each;
   * heartbeats and renews the leases while it runs.
   */
  async function deliver(ids: string[]): Promise<DeliverEmailsResult> {
    const ctx = Context.current();
    const token = leaseToken();
    const result: DeliverEmailsResult = { sent: 0, bounced: 0, retry: [] };
    const renew = setInterval(() => {
      ctx.heartbeat();
      emailDeliveries.renewLeases(token, LEASE_SECONDS).catch((err: unknown) => logger.warn({ err }, 'lease renewal failed'));
    }, RENEW_EVERY_MS);
    try {
      let remaining = ids;
      for (;;) {
        const { leased, busyUntil } = await emailDeliveries.lease(remaining, token, LEASE_SECONDS);
        // Content is read a chunk at a time (two queries per chunk), bounding memory to a chunk of emails.
        for (let i = 0; i < leased.length; i += LOAD_CHUNK) {
          const chunk = leased.slice(i, i + LOAD_CHUNK);
          const loaded = await emailDeliveries.loadMany(chunk);
          const suppressed = await suppressedAmong(loaded);
          await pool(chunk, SEND_CONCURRENCY, async (id) => {
            // A timed-out attempt learns so from its heartbeat: it must not start more sends.
            if (ctx.cancellationSignal.aborted) {
              await emailDeliveries.release(token, id, 'attempt cancelled');
              return;
            }
            const outcome = await sendOne(token, loaded.get(id), suppressed);
            if (outcome !== 'skipped') deps.metrics.deliveries.inc({ outcome });
            if (outcome === 'sent') result.sent += 1;
            else if (outcome === 'bounced') result.bounced += 1;
            else if (outcome === 'soft') result.retry.push(id);
          });
        }
        if (ctx.cancellationSignal.aborted) throw ApplicationFailure.retryable('delivery attempt cancelled');
        if (busyUntil === null) break;
        const leasedSet = new Set(leased);
        remaining = remaining.filter((id) => !leasedSet.has(id));
        ctx.heartbeat();
        await ctx.sleep(Math.max(50, busyUntil.getTime() - Date.now() + 50));
      }
      return result;
    } finally {
      clearInterval(renew);
    }
  }

  return {
    /** A group of accepted emails: send them all, then take them off the delivery queue. */
    async deliverEmails(input: { emailIds: string[] }): Promise<DeliverEmailsResult> {
      const result = await deliver(input.emailIds);
      await emailDeliveries.dequeue(input.emailIds);
      return result;
    },

    /** One email that failed temporarily; throws (and is retried by Temporal) while it keeps failing. */
    async retryEmail(input: { emailId: string }): Promise<SendOutcome> {
      const result = await deliver([input.emailId]);
      if (result.retry.length > 0) throw ApplicationFailure.retryable(`email ${input.emailId} failed temporarily`, 'SoftBounce');
      return result.sent > 0 ? 'sent' : result.bounced > 0 ? 'bounced' : 'skipped';
    },

    /**
     * The retry budget is spent: the email ends bounced (a transient bounce). If a lapsed attempt still
     * holds its lease, this waits the lease out rather than leave the email pending for ever.
     */
    async giveUpEmail(input: { emailId: string }): Promise<void> {
      const ctx = Context.current();
      const token = leaseToken();
      for (;;) {
        const { leased, busyUntil } = await emailDeliveries.lease([input.emailId], token, LEASE_SECONDS);
        if (leased.length > 0) {
          const loaded = (await emailDeliveries.loadMany(leased)).get(input.emailId);
          if (loaded) await finish(token, transientBounceOutcome(loaded.email, new Date(), loaded.lastError));
          return;
        }
        if (busyUntil === null) return;
        ctx.heartbeat();
        await ctx.sleep(Math.max(50, busyUntil.getTime() - Date.now() + 50));
      }
    },
  };
}
export type DeliveryActivities = ReturnType<typeof createDeliveryActivities>;
