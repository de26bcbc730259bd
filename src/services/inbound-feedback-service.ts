import type { EmailsRepo } from '../db/repos/emails-repo.js';
import { BOUNCE_TYPES } from '../domain/events.js';
import type { Logger } from '../logger.js';
import { parseFeedbackReport } from '../mail/feedback-report.js';
import type { FeedbackService } from './feedback-service.js';

export interface InboundFeedbackDeps {
  emails: Pick<EmailsRepo, 'findForFeedback'>;
  feedback: Pick<FeedbackService, 'complaint' | 'bounce'>;
  logger: Logger;
}

/** What became of a message mailed to the service. */
export type InboundOutcome = 'recorded' | 'not-a-report' | 'unknown-email';

/** The one address an email went to, or none when it had several (a redacted complaint cannot say which). */
function soleRecipient(recipients: string[]): string[] {
  const addresses = new Set(recipients.map((r) => r.toLowerCase()));
  return addresses.size === 1 ? [...addresses] : [];
}

/**
 * Messages mailed back to the service (through the inbound SMTP listener, or made up by the catcher's
 * simulator): a complaint or bounce report about an email it sent becomes that email's event. Everything
 * else is accepted and ignored, never answered: answering mail about mail is how bounce loops start.
 * Throws only when the sender should try again later (the SMTP listener answers 451).
 */
export function createInboundFeedbackService(deps: InboundFeedbackDeps) {
  const { logger } = deps;
  return {
    async receive(raw: Buffer): Promise<InboundOutcome> {
      const report = await parseFeedbackReport(raw).catch((err: unknown) => {
        logger.info({ err, size: raw.length }, 'inbound message could not be parsed; ignored');
        return undefined;
      });
      if (!report) {
        logger.info({ size: raw.length }, 'inbound message is not a complaint or bounce report; ignored');
        return 'not-a-report';
      }
      const email = await deps.emails.findForFeedback({ emailId: report.original.emailId, headerMessageId: report.original.messageId });
      if (!email) {
        logger.info({ kind: report.kind, original: report.original }, 'feedback report about no email of ours; ignored');
        return 'unknown-email';
      }
      // Delivery records its outcome right after the server's 250, so a report can only overtake it by
      // moments (the catcher's simulator) or after a crash in between; recording now would race the
      // outcome, so the report waits for it.
      if (email.status === 'pending') throw new Error(`email ${email.id} is still being delivered; try again later`);

      if (report.kind === 'complaint') {
        const recipients = report.recipients.length > 0 ? report.recipients : soleRecipient(email.recipients);
        await deps.feedback.complaint({ emailId: email.id, recipients, feedbackType: report.feedbackType });
        logger.info({ emailId: email.id, feedbackType: report.feedbackType, recipients, originalMailFrom: report.originalMailFrom, arrivalDate: report.arrivalDate }, 'complaint recorded');
        return 'recorded';
      }
      // One event per bounce type: a report may give up on one recipient for good and on another for now.
      for (const bounceType of BOUNCE_TYPES) {
        const recipients = report.recipients
          .filter((r) => r.bounceType === bounceType)
          .map((r) => ({ email_address: r.email_address, status: r.status, diagnostic_code: r.diagnostic_code }));
        if (recipients.length === 0) continue;
        await deps.feedback.bounce({ emailId: email.id, bounceType, recipients });
        logger.info({ emailId: email.id, bounceType, recipients: recipients.map((r) => `${r.email_address} ${r.status}`) }, 'bounce report recorded');
      }
      return 'recorded';
    },
  };
}
export type InboundFeedbackService = ReturnType<typeof createInboundFeedbackService>;
