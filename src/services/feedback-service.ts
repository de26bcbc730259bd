import type { EventsRepo } from '../db/index.js';
import { addressKey } from '../domain/address.js';
import { newComplainers } from '../domain/complaints.js';
import { type BounceType, type BouncedRecipient, event, suppressionsOf } from '../domain/events.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { HealthService } from './health-service.js';

export interface FeedbackDeps {
  events: Pick<EventsRepo, 'applyFeedback' | 'applyComplaint'>;
  health: Pick<HealthService, 'evaluate'>;
  logger: Logger;
  now: () => Date;
  metrics?: Pick<Metrics, 'bounces' | 'complaints'>;
}

/** The feedback types of RFC 5965 (and its registry); anything else a report says is counted as `other`. */
const FEEDBACK_TYPES = new Set(['abuse', 'fraud', 'virus', 'other', 'not-spam', 'auth-failure']);

/**
 * What recipients' servers tell the service after delivery: complaints (ARF) and bounce reports (DSN). Each
 * becomes the email's event, moves its status, suppresses the addresses and lets the health policy judge
 * the account. Answers false when the email is unknown (nothing is recorded then).
 */
export function createFeedbackService(deps: FeedbackDeps) {
  return {
    /** Answers false too when the complaint adds nobody to those already recorded for the email (a resent report). */
    /**
     * `countsForHealth` false (a complaint from a source MAILER_FBL_SOURCES does not list) records the event and
     * suppresses the recipient, but leaves the account's health as it was.
     */
    async complaint(input: {
      emailId: string;
      recipients: string[];
      feedbackType: string;
      countsForHealth: boolean;
      at?: Date;
    }): Promise<boolean> {
      const applied = await deps.events.applyComplaint(input.emailId, (prior) => {
        const recipients = newComplainers(prior, input.recipients.map(addressKey));
        if (!recipients) return undefined;
        const ev = event(newId('event'), 'complaint', input.at ?? deps.now(), {
          complaint_feedback_type: input.feedbackType || 'abuse',
          complained_recipients: recipients,
        });
        return { ev, suppress: suppressionsOf(recipients, 'complaint'), countsForHealth: input.countsForHealth };
      });
      if (!applied?.recorded) return false;
      const type = (input.feedbackType || 'abuse').toLowerCase();
      deps.metrics?.complaints.inc({ feedback_type: FEEDBACK_TYPES.has(type) ? type : 'other' });
      if (input.countsForHealth) await deps.health.evaluate(applied.accountId);
      return true;
    },

    /** A bounce reported after the mail server had accepted the email; a permanent one suppresses the addresses. */
    async bounce(input: {
      emailId: string;
      bounceType: BounceType;
      recipients: BouncedRecipient[];
      at?: Date;
    }): Promise<boolean> {
      const ev = event(newId('event'), 'bounce', input.at ?? deps.now(), {
        bounce_type: input.bounceType,
        bounce_subtype: 'General',
        bounced_recipients: input.recipients,
      });
      const suppress =
        input.bounceType === 'Permanent'
          ? suppressionsOf(
              input.recipients.map((r) => r.email_address),
              'bounce',
            )
          : [];
      const applied = await deps.events.applyFeedback(input.emailId, 'bounced', ev, suppress);
      if (!applied) return false;
      deps.metrics?.bounces.inc({ type: input.bounceType, subtype: 'General', source: 'report' });
      await deps.health.evaluate(applied.accountId);
      return true;
    },
  };
}
export type FeedbackService = ReturnType<typeof createFeedbackService>;
