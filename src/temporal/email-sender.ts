import type { DeliveryOutcome, LoadedEmail } from '../db/repos/email-deliveries-repo.js';
import { composeMessage } from '../mail/compose.js';
import {
  deliveredOutcome, hardBounceOutcome, recipientsOf, rejectedOutcome, suppressedOutcome,
} from '../mail/delivery-outcome.js';
import type { DeliveryDeps } from './delivery-activities.js';

export type SendOutcome = 'sent' | 'bounced' | 'soft' | 'skipped';

/**
 * One leased email through SMTP, and its outcome recorded. Only the holder of the lease `token` can record
 * anything, so a stale attempt that reaches here changes nothing.
 */
export function createEmailSender(deps: DeliveryDeps) {
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
    const result = await transport.send(message);
    if (result.deferred.length > 0) {
      const diagnostic = result.deferred[0]!.failure.diagnostic;
      await emailDeliveries.release(token, email.id, diagnostic);
      logger.warn({ emailId: email.id, code: result.deferred[0]!.failure.code, diagnostic }, 'email failed temporarily');
      return 'soft';
    }
    if (result.accepted.length === 0) {
      const failure = result.refused[0]!.failure;
      await finish(token, hardBounceOutcome(email, handedAt, failure, result.refused, envelopeTo));
      logger.info({ emailId: email.id, code: failure.code, status: failure.status }, 'email refused permanently');
      return 'bounced';
    }
    await finish(token, deliveredOutcome(email, {
      handedAt, acceptedAt: new Date(), messageId: result.messageId, response: result.accepted[0]!.response,
      accepted: result.accepted.map((a) => a.address), refused: result.refused, suppressed: skipped,
    }));
    return 'sent';
  }

  /** Of the recipients of `loaded`, those suppressed for their account (one query per chunk). */
  async function suppressedAmong(loaded: Map<string, LoadedEmail>): Promise<Set<string>> {
    const emails = [...loaded.values()].map((l) => l.email);
    return deps.suppressions.matching([...new Set(emails.map((e) => e.accountId))], [...new Set(emails.flatMap(recipientsOf))]);
  }

  return { finish, sendOne, suppressedAmong };
}
export type EmailSender = ReturnType<typeof createEmailSender>;
