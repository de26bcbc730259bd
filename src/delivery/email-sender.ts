import { SpanKind } from '@opentelemetry/api';
import type { AnsweredProgress, DeliveryOutcome, LoadedEmail } from '../domain/entities/delivery.js';
import { addressKey } from '../domain/address.js';
import type { SuppressionRule } from '../domain/entities/suppressions.js';
import { suppressedBy } from '../domain/suppression-rules.js';
import { groupPerTurn } from '../group-commit.js';
import { composeMessage } from './message/compose.js';
import { renderMessage } from './message/render-message.js';
import {
  attemptOutcome,
  pendingRecipientsOf,
  recipientsOf,
  rejectedOutcome,
  suppressedOutcome,
} from './outcome/delivery-outcome.js';
import { mergedResult, recipientCopies } from './message/recipient-copies.js';
import { smtpSpanAttributes } from './transport/smtp-span-attributes.js';
import type { BuildTerms } from './message/prebuilt-messages.js';
import type { BuiltMessage } from './transport/send-built.js';
import type { TransportResult } from './transport/transport.js';
import { withLogFields } from '../telemetry/log-context.js';
import { continuing, inSpan } from '../telemetry/spans.js';
import type { DeliveryDeps } from './delivery-deps.js';
import { createOutcomeWriter } from './outcome/outcome-writer.js';

/** `held`: nothing was tried, the destination's queue in this worker was full; the email is free again, its message kept. */
export type SendOutcome = 'sent' | 'bounced' | 'soft' | 'held' | 'skipped';

/** Most emails' answered copies kept by one statement. */
const MAX_ANSWERED_BATCH = 256;

/** Suppressions by `account_id + ' ' + address` (the recipient's key form): each one's scope and topic. */
export type Suppressed = ReadonlyMap<string, readonly SuppressionRule[]>;

/** An attempt worked out ahead of its turn (prepare): whom to hand the message to, and the message being built (null: nothing to send). */
export interface Prepared {
  skipped: string[];
  envelopeTo: string[];
  message: Promise<BuiltMessage> | null;
}

/**
 * One leased email through SMTP, and its outcome recorded. Only the holder of the lease `token` can record
 * anything, so a stale attempt that reaches here changes nothing.
 */
export function createEmailSender(deps: DeliveryDeps) {
  const { emailDeliveries, transport, logger } = deps;
  // Outcomes of all the activities running in this worker share statements (group commit).
  const outcomes = createOutcomeWriter(emailDeliveries.recordOutcomes, {
    onRetry: (err, attempt) =>
      logger.warn(
        { err, attempt },
        'delivery outcome not recorded yet: the database is unreachable; retrying, the lease kept',
      ),
  });
  // Copies handed over while their email's other copies are still being sent, kept as they are answered.
  const answered = groupPerTurn<AnsweredProgress, void>(MAX_ANSWERED_BATCH, async (batch) => {
    try {
      await emailDeliveries.recordAnswered(batch.map((w) => w.item));
      for (const w of batch) w.resolve();
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  });

  /** Records an outcome; a counted bounce lets the health policy judge the account. */
  async function finish(token: string, outcome: DeliveryOutcome): Promise<void> {
    const recorded = await outcomes.record({ token, outcome });
    if (recorded) countOutcome(deps.metrics, outcome);
    const counted = outcome.events.some(
      (e) => e.type === 'bounce' && (e.data as { bounce_subtype?: string }).bounce_subtype !== 'Suppressed',
    );
    if (recorded && counted) {
      await deps
        .judgeAccount(recorded.accountId)
        .catch((err: unknown) => logger.warn({ err, accountId: recorded.accountId }, 'health evaluation failed'));
    }
  }

  /**
   * What an attempt of `loaded` will hand over, worked out before its turn: the recipients not suppressed,
   * and the message built and DKIM-signed, started now. Building is mostly waiting (nodemailer's MIME tree
   * streams itself in about ten event-loop turns; the signature is made in the thread pool), about half of a
   * send's time in its lane under a burst (docs/benchmark.md, "Session 8's change"). Started when the email's
   * chunk is loaded, it overlaps the sends ahead of it, so the SMTP lanes (the duplicate window) spend their time sending.
   */
  function prepare(loaded: LoadedEmail, suppressed: Suppressed): Prepared {
    const { email, sender } = loaded;
    // Copies an attempt that died had handed over are not sent again (its outcome records them).
    const handedOver = new Set(loaded.answered.map((a) => addressKey(a.address)));
    const recipients = pendingRecipientsOf(email).filter((r) => !handedOver.has(r));
    // Which of a recipient's suppressions stop this email depends on its stream and topic (suppression-rules.ts).
    const skipped = recipients.filter((r) => suppressedBy(suppressed.get(`${email.accountId} ${r}`), email));
    const envelopeTo = recipients.filter((r) => !skipped.includes(r));
    const sends =
      email.status === 'pending' &&
      envelopeTo.length > 0 &&
      sender.accountStatus !== 'paused' &&
      sender.accountStatus !== 'banned';
    const message = sends ? build(loaded, envelopeTo) : null;
    // Awaited in the email's turn, which reports a failure; until then a rejection is not unhandled.
    message?.catch(() => {});
    return { skipped, envelopeTo, message };
  }

  /** The message of `loaded` for `envelopeTo`: the one built ahead (scheduled emails) if it still holds, else built now. */
  async function build(loaded: LoadedEmail, envelopeTo: string[]): Promise<BuiltMessage> {
    const terms = await termsOf(loaded);
    const ready = deps.prebuilt?.take(loaded.email.id, terms);
    // Built for all of its recipients: this attempt's envelope is its own (the bytes do not name it).
    if (ready) return { ...ready, envelope: { from: ready.envelope.from, to: envelopeTo } };
    return buildUnder(loaded, envelopeTo, terms);
  }

  /** Builds the message of `loaded`, an email about to be created, and keeps it for its send; false when not kept. */
  async function buildAhead(loaded: LoadedEmail): Promise<boolean> {
    if (!deps.prebuilt) return false;
    const terms = await termsOf(loaded);
    return deps.prebuilt.put(
      loaded.email.id,
      await buildUnder(loaded, pendingRecipientsOf(loaded.email), terms),
      terms,
    );
  }

  async function termsOf({ email, sender }: LoadedEmail): Promise<BuildTerms> {
    return {
      openTracking: sender.openTracking,
      clickTracking: sender.clickTracking,
      dkim: await deps.dkimKey(email.accountId, email.senderDomain),
    };
  }

  async function buildUnder(loaded: LoadedEmail, envelopeTo: string[], terms: BuildTerms): Promise<BuiltMessage> {
    const { email } = loaded;
    // The header carries the email's token (one for every copy); each copy's envelope, its recipient's (handOver).
    return renderMessage(
      composeMessage(withTracking(email, terms), loaded.attachments, {
        envelopeTo,
        reportToken: deps.reportToken(email.id),
        returnPath: returnPathOf(email, envelopeTo[0] ?? ''),
        dkim: terms.dkim,
        // Broadcast mail only (RFC 8058): a one-time password or a receipt must carry no unsubscribe link.
        ...(email.stream === 'broadcast' ? { unsubscribe: deps.listUnsubscribe(email.id, email.senderDomain) } : {}),
      }),
    );
  }

  /**
   * The envelope sender of `recipient`'s copy of `email`: its VERP return path, carrying that recipient's token
   * (its place in `order`, the email's recipientsOf: worked out once per hand-over by the caller).
   */
  function returnPathOf(email: LoadedEmail['email'], recipient: string, order = recipientsOf(email)): string {
    const index = order.indexOf(recipient);
    return deps.returnPath(
      index < 0 ? deps.reportToken(email.id) : deps.recipientToken(email.id, index),
      email.senderDomain,
    );
  }

  /**
   * Every log line of an email's attempt names it; with tracing on, the attempt is a span in the trace the
   * email was accepted in (its stored traceparent), linked to the delivery activity's span.
   */
  async function sendOne(
    token: string,
    loaded: LoadedEmail | undefined,
    prepared: Prepared | undefined,
  ): Promise<SendOutcome> {
    if (!loaded || !prepared || loaded.email.status !== 'pending') return 'skipped';
    const { email } = loaded;
    return withLogFields({ emailId: email.id }, () =>
      inSpan(
        'deliver email',
        {
          kind: SpanKind.CONSUMER,
          ...continuing(email.traceparent),
          attributes: { 'mailer.email.id': email.id, 'mailer.delivery.attempt': email.attempts },
        },
        async (span) => {
          const outcome = await attempt(token, loaded, prepared);
          span?.setAttribute('mailer.delivery.outcome', outcome);
          return outcome;
        },
      ),
    );
  }

  /**
   * The SMTP hand-over, a copy per recipient (recipient-copies.ts), as a client span: the server, its reply and
   * the recipients' counts. An email's outcome is recorded once all its copies are answered; so that a crash
   * meanwhile does not send its answered copies again, each is kept as soon as it is answered (recordAnswered)
   * while others are still out. A copy not kept (the database away) is only what it was before: in the window.
   */
  function handOver(
    token: string,
    email: LoadedEmail['email'],
    message: BuiltMessage,
    envelopeTo: string[],
  ): Promise<TransportResult> {
    return inSpan('smtp send', { kind: SpanKind.CLIENT, attributes: { 'mailer.email.id': email.id } }, async (span) => {
      const order = recipientsOf(email);
      const copies = recipientCopies(message, envelopeTo, (recipient) => returnPathOf(email, recipient, order));
      const keep = async (result: TransportResult) => {
        if (copies.length === 1 || result.accepted.length === 0) return result;
        await answered({ token, emailId: email.id, copies: result.accepted }).catch((err: unknown) =>
          logger.warn({ err, emailId: email.id }, "an answered copy was not kept before its email's outcome"),
        );
        return result;
      };
      const result = mergedResult(
        message.messageId,
        await Promise.all(
          copies.map((copy) => transport.send(copy, { accountId: email.accountId, stream: email.stream }).then(keep)),
        ),
      );
      span?.setAttributes(smtpSpanAttributes(result, transport.host));
      return result;
    });
  }

  async function attempt(
    token: string,
    loaded: LoadedEmail,
    { skipped, envelopeTo, message }: Prepared,
  ): Promise<SendOutcome> {
    const { email, sender } = loaded;
    // An account paused or banned after accepting this email sends nothing more.
    if (sender.accountStatus === 'paused' || sender.accountStatus === 'banned') {
      await finish(token, rejectedOutcome(email, new Date(), `account ${sender.accountStatus}`));
      return 'bounced';
    }
    const handedBefore = loaded.answered;
    if (envelopeTo.length === 0 || !message) {
      // Every recipient left is suppressed, or was handed over by an attempt that died before its outcome:
      // nothing to hand over (an earlier attempt may have delivered to others).
      const outcome =
        email.remainingRecipients === null && handedBefore.length === 0
          ? suppressedOutcome(email, new Date(), skipped)
          : attemptOutcome(email, {
              accepted: handedBefore,
              refused: [],
              deferred: [],
              handedAt: new Date(),
              answeredAt: new Date(),
              messageId: email.headerMessageId,
              suppressed: skipped,
            });
      await finish(token, outcome);
      return outcome.status === 'delivered' ? 'sent' : 'bounced';
    }
    const built = await message;
    const handedAt = new Date();
    const sent = await handOver(token, email, built, envelopeTo);
    const result = handedBefore.length === 0 ? sent : { ...sent, accepted: [...handedBefore, ...sent.accepted] };
    if (result.accepted.length === 0 && result.refused.length === 0) {
      // Nothing was answered for good: the email stays as it was, free for the next attempt.
      const { failure } = result.deferred[0] ?? { failure: { code: 0, diagnostic: 'no recipient answered' } };
      const held = result.deferred.length > 0 && result.deferred.every((d) => d.failure.held);
      // Held back by this worker's own queue: the next attempt comes within seconds and sends these bytes.
      if (held) deps.prebuilt?.put(email.id, built, await termsOf(loaded));
      await emailDeliveries.release(token, email.id, failure.diagnostic);
      if (held) return 'held';
      deps.metrics.deliveries.inc({ outcome: 'soft' });
      logger.warn(
        { emailId: email.id, code: failure.code, diagnostic: failure.diagnostic },
        'email failed temporarily',
      );
      return 'soft';
    }
    const outcome = attemptOutcome(email, { ...result, handedAt, answeredAt: new Date(), suppressed: skipped });
    await finish(token, outcome);
    if (outcome.status === 'pending') {
      logger.info(
        { emailId: email.id, remaining: outcome.remaining, diagnostic: outcome.error },
        'email delivered in part; the rest is retried',
      );
      return 'soft';
    }
    if (outcome.status === 'bounced')
      logger.info({ emailId: email.id, diagnostic: outcome.error }, 'email refused permanently');
    return outcome.status === 'delivered' ? 'sent' : 'bounced';
  }

  /** The HTML with the open pixel and rewritten links, when the sender's domain tracks. */
  function withTracking(email: LoadedEmail['email'], terms: BuildTerms): LoadedEmail['email'] {
    if (email.html === '' || !(terms.openTracking || terms.clickTracking)) return email;
    return {
      ...email,
      html: deps.rewriteForTracking(email.html, email.id, { open: terms.openTracking, click: terms.clickTracking }),
    };
  }

  /**
   * The suppressions the accounts of `loaded` have of its recipients (one query per chunk), whatever their scope:
   * prepare judges each against its email's stream and topic.
   */
  async function suppressedAmong(loaded: Map<string, LoadedEmail>): Promise<Suppressed> {
    const emails = [...loaded.values()].map((l) => l.email);
    return deps.suppressions.matching(
      [...new Set(emails.map((e) => e.accountId))],
      [...new Set(emails.flatMap(recipientsOf))],
    );
  }

  return { buildAhead, finish, prepare, sendOne, suppressedAmong };
}
export type EmailSender = ReturnType<typeof createEmailSender>;

/** An attempt's recorded outcome in the metrics: one delivery outcome per email, and its bounce events. */
function countOutcome(metrics: DeliveryDeps['metrics'], outcome: DeliveryOutcome): void {
  const rejected = outcome.events.some((e) => e.type === 'reject');
  const label =
    outcome.status === 'delivered' ? 'sent' : outcome.status === 'pending' ? 'soft' : rejected ? 'rejected' : 'bounced';
  metrics.deliveries.inc({ outcome: label });
  for (const e of outcome.events) {
    if (e.type !== 'bounce') continue;
    const data = e.data as { bounce_type: string; bounce_subtype: string };
    metrics.bounces.inc({ type: data.bounce_type, subtype: data.bounce_subtype, source: 'smtp' });
  }
}
