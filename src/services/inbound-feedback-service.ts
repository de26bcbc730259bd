import type { EmailsRepo } from '../db/index.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { recipientKeysOf } from '../delivery/outcome/delivery-outcome.js';
import {
  parseFeedbackReport,
  type BounceReport,
  type ComplaintReport,
  type FeedbackReport,
} from '../inbound/feedback-report.js';
import type { FeedbackSources } from '../inbound/feedback-sources.js';
import type { ReportProof, ReportTokens } from '../delivery/message/report-token.js';
import { isReturnPath, parseReturnPath } from '../delivery/message/return-path.js';
import type { FeedbackService } from './feedback-service.js';

export interface InboundFeedbackDeps {
  emails: Pick<EmailsRepo, 'findForFeedback'>;
  feedback: Pick<FeedbackService, 'complaint' | 'bounce'>;
  tokens: ReportTokens;
  /** Which complaints count against an account's health (MAILER_FBL_SOURCES). */
  sources: Pick<FeedbackSources, 'trusted'>;
  logger: Logger;
  metrics?: Pick<Metrics, 'inboundReports'>;
}

type FeedbackEmail = NonNullable<Awaited<ReturnType<EmailsRepo['findForFeedback']>>>;

/** The SMTP envelope a message arrived with: the addresses it was mailed to, and from where. */
export interface InboundEnvelope {
  rcptTo: string[];
  /** The connecting client's address (the report listener's); absent for the catcher's simulated reports. */
  remoteAddress?: string;
  /** A report the catcher's simulator made up: the service's own feedback loop, trusted as a configured one. */
  simulated?: boolean;
}

/**
 * What became of a message mailed to the service. `refused` (the SMTP listener answers 550 5.7.1): it
 * carries no proof that it came back for an email of ours, or its proof and its contents disagree.
 * The others are accepted (250): `ignored` is mail about one of our emails that is no report (an
 * auto-reply or a delay warning at a return-path address), names none of its recipients, or cannot tell
 * whose copy of an email to several recipients it is about.
 */
export type InboundOutcome = 'recorded' | 'ignored' | 'duplicate' | 'unknown-email' | 'refused';

/** What a report proves: the email, and the recipient whose copy it came back for (when it can tell). */
type Proven = { emailId: string; recipient?: number };

/** The proofs a message carries: the return paths it was mailed to, and the original's quoted token and Return-Path. */
function proofsOf(
  tokens: ReportTokens,
  report: FeedbackReport | undefined,
  envelope: InboundEnvelope,
): { proofs: ReportProof[] } | { refused: string } {
  const proofs: ReportProof[] = [];
  for (const address of envelope.rcptTo) {
    const proof = parseReturnPath(tokens, address);
    if (proof) proofs.push(proof);
  }
  const headerToken = report?.original.reportToken;
  if (headerToken !== undefined) {
    const proof = tokens.verify(headerToken);
    if (!proof) return { refused: 'the quoted report token is not valid' };
    proofs.push(proof);
  }
  // The Return-Path the receiving server wrote on the recipient's copy, quoted by a feedback loop: that copy's token.
  const quotedReturnPath = report?.original.returnPath;
  if (quotedReturnPath !== undefined && isReturnPath(quotedReturnPath)) {
    const proof = parseReturnPath(tokens, quotedReturnPath);
    if (!proof) return { refused: 'the quoted Return-Path carries no valid report token' };
    proofs.push(proof);
  }
  return { proofs };
}

/** The email (and recipient) a report may be about, or why it is refused. */
function provenEmail(
  tokens: ReportTokens,
  report: FeedbackReport | undefined,
  envelope: InboundEnvelope,
): Proven | { refused: string } {
  const found = proofsOf(tokens, report, envelope);
  if ('refused' in found) return found;
  const [emailId, another] = new Set(found.proofs.map((p) => p.emailId));
  if (emailId === undefined) return { refused: 'no valid report token' };
  if (another !== undefined) return { refused: 'the report tokens name different emails' };
  const recipients = new Set(found.proofs.flatMap((p) => (p.recipient === undefined ? [] : [p.recipient])));
  if (recipients.size > 1) return { refused: "the report tokens name different recipients' copies" };
  const quotedId = report?.original.emailId;
  if (quotedId !== undefined && quotedId.toLowerCase() !== emailId)
    return { refused: 'the report token names another email than the quoted headers' };
  const [recipient] = recipients;
  return recipient === undefined ? { emailId } : { emailId, recipient };
}

/**
 * The one recipient a report may speak for: the one whose copy it came back for (a recipient's token), else
 * the email's only recipient. An email's header token is shared by all of its recipients, so with only that
 * as proof a report about an email to several could come from any of them, about any of them: it speaks for
 * nobody.
 */
function reportedRecipient(email: FeedbackEmail, proof: Proven): string | undefined {
  const own = recipientKeysOf(email.recipients);
  if (proof.recipient !== undefined) return own[proof.recipient];
  return own.length === 1 ? own[0] : undefined;
}

async function recordComplaint(
  deps: InboundFeedbackDeps,
  email: FeedbackEmail,
  report: ComplaintReport,
  recipient: string,
  countsForHealth: boolean,
): Promise<InboundOutcome> {
  // Whoever the report names (a feedback loop may redact the complainer, or name a forward), it is the
  // complaint of the recipient whose copy it came back for.
  const recorded = await deps.feedback.complaint({
    emailId: email.id,
    recipients: [recipient],
    feedbackType: report.feedbackType,
    countsForHealth,
  });
  deps.logger.info(
    {
      emailId: email.id,
      feedbackType: report.feedbackType,
      recipient,
      countsForHealth,
      reported: report.recipients,
      originalMailFrom: report.originalMailFrom,
      arrivalDate: report.arrivalDate,
    },
    recorded ? 'complaint recorded' : 'complaint already recorded; ignored',
  );
  return recorded ? 'recorded' : 'duplicate';
}

async function recordBounce(
  deps: InboundFeedbackDeps,
  email: FeedbackEmail,
  report: BounceReport,
  recipient: string,
): Promise<InboundOutcome> {
  // A DSN speaks for the recipient whose copy it came back for only, by the entry naming it (by Final-Recipient,
  // else by Original-Recipient after a forward). Other entries, naming a co-recipient or a stranger, are
  // recorded nowhere.
  const named = report.recipients.find((r) => r.email_address === recipient || r.originalRecipient === recipient);
  const foreign = report.recipients.filter((r) => r !== named).map((r) => r.email_address);
  if (foreign.length > 0)
    deps.logger.info(
      { emailId: email.id, recipient, foreign },
      'bounce report names addresses other than the copy it came back for; nothing recorded for them',
    );
  if (!named) return 'ignored';
  const bounced = { email_address: recipient, status: named.status, diagnostic_code: named.diagnostic_code };
  await deps.feedback.bounce({ emailId: email.id, bounceType: named.bounceType, recipients: [bounced] });
  deps.logger.info(
    { emailId: email.id, bounceType: named.bounceType, recipient: `${recipient} ${named.status}` },
    'bounce report recorded',
  );
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
        logger.info(
          { size: raw.length, kind: report?.kind ?? 'not a report', original: report?.original, reason: proof.refused },
          'inbound message refused; nothing recorded',
        );
        return 'refused';
      }
      if (!report) {
        logger.info(
          { size: raw.length, emailId: proof.emailId },
          'inbound message is not a complaint or bounce report; ignored',
        );
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
          logger.info(
            { kind: report.kind, emailId: email.id, quotedMessageId },
            'inbound message refused; its Message-ID names another email; nothing recorded',
          );
          return 'refused';
        }
      }
      // Delivery records its outcome right after the server's 250, so a report can only overtake it by
      // moments (the catcher's simulator) or after a crash in between; recording now would race the
      // outcome, so the report waits for it.
      if (email.status === 'pending') throw new Error(`email ${email.id} is still being delivered; try again later`);

      const recipient = reportedRecipient(email, proof);
      if (recipient === undefined) {
        logger.info(
          { kind: report.kind, emailId: email.id, recipients: email.recipients.length },
          'report proves the email but not whose copy it came back for; ignored',
        );
        return 'ignored';
      }
      if (report.kind === 'bounce') return recordBounce(deps, email, report, recipient);
      const countsForHealth = envelope.simulated === true || (await deps.sources.trusted(raw, envelope.remoteAddress));
      return recordComplaint(deps, email, report, recipient, countsForHealth);
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
