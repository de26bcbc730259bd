import type { Logger } from '../logger.js';
import {
  isUnsubscribeAddress,
  parseUnsubscribeAddress,
  type UnsubscribeTokens,
} from '../delivery/message/unsubscribe-token.js';
import { AppError } from '../errors.js';
import type { InboundEnvelope, InboundFeedbackService, InboundOutcome } from './inbound-feedback-service.js';
import type { UnsubscribeService } from './unsubscribe-service.js';

/** What the report listener asks of what handles its mail (inbound/report-listener.ts). */
type InboundHandler = Pick<InboundFeedbackService, 'acceptsRecipient' | 'receive'>;

/**
 * The mailto form of one-click unsubscribe: broadcast mail lists `mailto:unsub-<token>@<return-path domain>`
 * (unsubscribe-token.ts), a domain whose MX is the report listener. Mail to such an address unsubscribes
 * exactly as a POST to the URL does, authenticated by the token alone (what the message says, and who sent it,
 * are not read: a mail client writes whatever it likes there). An `unsub-` address whose token this service
 * did not sign is refused at RCPT TO (550 5.1.1), as a forged return path is; every other address goes to the
 * report handling as before. The listener's own bounds (size, recipients, connections, time) hold for these
 * messages too.
 */
export function withUnsubscribeAddresses(
  reports: InboundHandler,
  deps: {
    tokens: Pick<UnsubscribeTokens, 'verify'>;
    unsubscribe: Pick<UnsubscribeService, 'unsubscribeEmail'>;
    logger: Pick<Logger, 'info'>;
  },
): InboundHandler {
  const { tokens, unsubscribe, logger } = deps;
  return {
    acceptsRecipient(address) {
      if (!isUnsubscribeAddress(address)) return reports.acceptsRecipient(address);
      return parseUnsubscribeAddress(tokens, address) !== undefined;
    },

    async receive(raw: Buffer, envelope: InboundEnvelope = { rcptTo: [] }): Promise<InboundOutcome> {
      const others = envelope.rcptTo.filter((a) => !isUnsubscribeAddress(a));
      const emailIds = new Set(
        envelope.rcptTo.flatMap((a) => {
          const emailId = isUnsubscribeAddress(a) ? parseUnsubscribeAddress(tokens, a) : undefined;
          return emailId === undefined ? [] : [emailId];
        }),
      );
      if (emailIds.size === 0) return reports.receive(raw, envelope);
      let unsubscribed = 0;
      for (const emailId of emailIds) {
        try {
          const { outcome } = await unsubscribe.unsubscribeEmail(emailId);
          unsubscribed++;
          logger.info({ emailId, outcome, size: raw.length }, 'unsubscribed by mail');
        } catch (err) {
          // Signed, but its email is gone (retention, or its recipient erased): nothing left to unsubscribe.
          // Anything else (the database away, too many waiting) is thrown: the listener answers 451, retry.
          if (!(err instanceof AppError && err.kind === 'not_found')) throw err;
          logger.info({ emailId }, 'unsubscribe by mail for an email that no longer exists');
        }
      }
      // A report sent in the same transaction to a return path is handled as it would be alone.
      if (others.length > 0) await reports.receive(raw, { ...envelope, rcptTo: others });
      return unsubscribed > 0 ? 'recorded' : 'refused';
    },
  };
}
