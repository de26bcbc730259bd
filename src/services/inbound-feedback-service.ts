import type { EmailsRepo } from '../db/repos/emails-repo.js';
import { addressKey } from '../domain/address.js';
import { BOUNCE_TYPES } from '../domain/events.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { parseFeedbackReport, type BounceReport, type ComplaintReport, type FailedRecipient, type FeedbackReport } from '../mail/feedback-report.js';
import type { ReportTokens } from '../mail/report-token.js';
import { isReturnPath, parseReturnPath } from '../mail/return-path.js';
import type { FeedbackService } from './feedback-service.js';

export interface InboundFeedbackDeps {
  emails: Pick<EmailsRepo, 'findForFeedback'>;
  feedback: Pick<FeedbackService, 'complaint' | 'bounce'>;
  tokens: ReportTokens;
  logger: Logger;
  metrics?: Pick<Metrics, 'inboundReports'>;
}

type FeedbackEmail = NonNullable<Awaited<ReturnType<EmailsRepo['findForFeedback']>>>;

/** The SMTP envelope a message arrived with: the addresses it was mailed to. */
export interface InboundEnvelope {
  rcptTo: string[];
}

/**
 * What became of a message mailed to the service. `refused` (the SMTP listener answers 550 5.7.1): it
 * carries no proof that it came back for an email of ours, or its proof and its contents disagree.
 * The others are accepted (250): `ignored` is mail about one of our emails that is no report (an
 * auto-reply or a delay warning at a return-path address) or names none of its recipients.
 */
export type InboundOutcome = 'recorded' | 'ignored' | 'duplicate' | 'unknown-email' | 'refused';

/** The one address an email went to, or none when it had several (a redacted complaint cannot say which). */
function soleRecipient(recipients: Set<string>): string[] {
  return recipients.size === 1 ? [...recipients] : [];
}

// Recipients are stored in their canonical form (converted at acceptance); compared by their key.
const addressesOf = (recipients: string[]) => new Set(recipients.map(addressKey));

/** The email a report may be about, or why it is refused. */
function provenEmail(tokens: ReportTokens, report: FeedbackReport | undefined, envelope: InboundEnvelope): { emailId: string } | { refused: string } {
  const claimed = new Set<string>();
  for (const address of envelope.rcptTo) {
    const id = parseReturnPath(tokens, address);
    if (id) claimed.add(id);
  }
  const headerToken = report?.original.reportToken;
  if (headerToken !== undefined) {
    const id = tokens.verify(headerToken);
    if (!id) return { refused: 'the quoted report token is not valid' };
    claimed.add(id);
  }
  if (claimed.size === 0) return { refused: 'no valid report token' };
  if (claimed.size > 1) return { refused: 'the report tokens name different emails' };
  const [emailId] = claimed as unknown as [string];
  const quotedId = report?.original.emailId;
  if (quotedId !== undefined && quotedId.toLowerCase() !== emailId) return { refused: 'the report token names another email than the quoted headers' };
  return { emailId };
}

async function recordComplaint(deps: InboundFeedbackDeps, email: FeedbackEmail, report: ComplaintReport): Promise<InboundOutcome> {
  const own = addressesOf(email.recipients);
  // Only the email's own recipients can have complained; a feedback loop that names someone else
  // (a forward) or nobody is taken as naming the email's one recipient, if it had one.
  const named = report.recipients.filter((r) => own.has(r));
  const recipients = named.length > 0 ? named : soleRecipient(own);
  const recorded = await deps.feedback.complaint({ emailId: email.id, recipients, feedbackType: report.feedbackType });
  deps.logger.info({ emailId: email.id, feedbackType: report.feedbackType, recipients, reported: report.recipients, originalMailFrom: report.originalMailFrom, arrivalDate: report.arrivalDate },
    recorded ? 'complaint recorded' : 'complaint already recorded; ignored');
  return recorded ? 'recorded' : 'duplicate';
}

async function recordBounce(deps: InboundFeedbackDeps, email: FeedbackEmail, report: BounceReport): Promise<InboundOutcome> {
  const own = addressesOf(email.recipients);
  // A DSN speaks for the email's own recipients only (by Final-Recipient, else by Original-Recipient
  // after a forward); others it names are recorded nowhere. One event per bounce type: a report may
  // give up on one recipient for good and on another for now.
  const failed: FailedRecipient[] = [];
  const foreign: string[] = [];
  for (const r of report.recipients) {
    const address = [r.email_address, r.originalRecipient].find((a) => a !== undefined && own.has(a));
    if (address) failed.push({ ...r, email_address: address });
    else foreign.push(r.email_address);
  }
  if (foreign.length > 0) deps.logger.info({ emailId: email.id, foreign }, 'bounce report names addresses the email was not sent to; nothing recorded for them');
  if (failed.length === 0) return 'ignored';
  for (const bounceType of BOUNCE_TYPES) {
    const recipients = failed
      .filter((r) => r.bounceType === bounceType)
      .map((r) => ({ email_address: r.email_address, status: r.status, diagnostic_code: r.diagnostic_code }));
    if (recipients.length === 0) continue;
    await deps.feedback.bounce({ emailId: email.id, bounceType, recipients });
    deps.logger.info({ emailId: email.id, bounceType, recipients: recipients.map((r) => `${r.email_address} ${r.status}`) }, 'bounce report recorded');
  }
  return 'recorded';
}

/**
 * Messages mailed back to the service (through the inbound SMTP listener, or made up by the catcher's
 * simulator): a complaint or bounce report about an email it sent becomes that email's event.
 *
 * A report is taken only with proof that it came back for that email: the signed report token
 * (report-token.ts) of the email, either in the address it was mailed to (the VERP return path) or in
 * the `X-Mail-Report-Token` header of the original it quotes. Only whoever handled the message has seen
 * its token, so nobody can report on an email by guessing or learning its id or Message-ID. A report
 * whose tokens name different emails, or whose quoted X-Mail-Email-Id or Message-ID names another email,
 * is refused; so is a token the service did not sign. Throws only when the sender should try again later
 * (the SMTP listener answers 451).
 */
export function createInboundFeedbackService(deps: InboundFeedbackDeps) {
  const { logger, tokens } = deps;

  const service = {
    /**
     * Whether the listener takes mail for an address (RCPT TO): a return path only when its token is
     * valid; any other address (the feedback-loop address registered with mailbox providers) always,
     * since what comes to it is judged by its contents.
     */
    acceptsRecipient(address: string): boolean {
      return !isReturnPath(address) || parseReturnPath(tokens, address) !== undefined;
    },

    async receive(raw: Buffer, envelope: InboundEnvelope = { rcptTo: [] }): Promise<InboundOutcome> {
      const report = await parseFeedbackReport(raw).catch((err: unknown) => {
        logger.info({ err, size: raw.length }, 'inbound message could not be parsed');
        return undefined;
      });
      const proof = provenEmail(tokens, report, envelope);
      if ('refused' in proof) {
        logger.info({ size: raw.length, kind: report?.kind ?? 'not a report', original: report?.original, reason: proof.refused }, 'inbound message refused; nothing recorded');
        return 'refused';
      }
      if (!report) {
        logger.info({ size: raw.length, emailId: proof.emailId }, 'inbound message is not a complaint or bounce report; ignored');
        return 'ignored';
      }
      const email = await deps.emails.findForFeedback({ emailId: proof.emailId });
      if (!email) {
        // Signed by the service, so genuine: the email is gone (or the token is from another installation sharing the key).
        logger.info({ kind: report.kind, emailId: proof.emailId }, 'feedback report about no email of ours; ignored');
        return 'unknown-email';
      }
      const quotedMessageId = report.original.messageId;
      if (quotedMessageId !== undefined && quotedMessageId !== email.headerMessageId) {
        // A relay may have replaced the Message-ID; only one naming another email of ours is a contradiction.
        const other = await deps.emails.findForFeedback({ headerMessageId: quotedMessageId });
        if (other && other.id !== email.id) {
          logger.info({ kind: report.kind, emailId: email.id, quotedMessageId }, 'inbound message refused; its Message-ID names another email; nothing recorded');
          return 'refused';
        }
      }
      // Delivery records its outcome right after the server's 250, so a report can only overtake it by
      // moments (the catcher's simulator) or after a crash in between; recording now would race the
      // outcome, so the report waits for it.
      if (email.status === 'pending') throw new Error(`email ${email.id} is still being delivered; try again later`);

      return report.kind === 'complaint' ? recordComplaint(deps, email, report) : recordBounce(deps, email, report);
    },
  };
  return {
    ...service,
    /** Counted by outcome in the process that received it (the report listener's, or the catcher's). */
    async receive(raw: Buffer, envelope?: InboundEnvelope): Promise<InboundOutcome> {
      const outcome = await service.receive(raw, envelope);
      deps.metrics?.inboundReports.inc({ outcome });
      return outcome;
    },
  };
}
export type InboundFeedbackService = ReturnType<typeof createInboundFeedbackService>;
