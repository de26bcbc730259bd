import type { EmailDeliveriesRepo, SuppressionsRepo } from '../db/index.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { DkimSigningKey } from './dkim/dkim-keyring.js';
import type { PrebuiltMessages } from './message/prebuilt-messages.js';
import type { ListUnsubscribe } from './message/unsubscribe-token.js';
import type { MailTransport } from './transport/transport.js';

/** What delivering an email needs: its repositories, the transport, the tokens and keys that sign it, and telemetry. */
export interface DeliveryDeps {
  emailDeliveries: EmailDeliveriesRepo;
  suppressions: Pick<SuppressionsRepo, 'matching'>;
  transport: MailTransport;
  /** Adds the open pixel and rewrites links of HTML mail from domains that track. */
  rewriteForTracking: (html: string, emailId: string, opts: { open: boolean; click: boolean }) => string;
  /** The signed token (report-token.ts) every message carries, so reports about it can prove they are genuine. */
  reportToken: (emailId: string) => string;
  /** The signed token of one recipient's copy (its index among the email's recipients), carried in that copy's envelope sender. */
  recipientToken: (emailId: string, recipient: number) => string;
  /** The VERP envelope sender (return-path.ts) carrying a report token, for mail from `senderDomain`. */
  returnPath: (reportToken: string, senderDomain: string) => string;
  /** A broadcast email's one-click unsubscribe URL and mailto address (unsubscribe-token.ts), for mail from `senderDomain`. */
  listUnsubscribe: (emailId: string, senderDomain: string) => ListUnsubscribe;
  /** The DKIM key that signs mail from a domain of an account; undefined sends unsigned. */
  dkimKey: (accountId: string, domain: string) => Promise<DkimSigningKey | undefined>;
  /** Messages built ahead of their send (scheduled emails); absent: every message is built when sent. */
  prebuilt?: PrebuiltMessages;
  /** Lets the health policy judge an account after a counted bounce. */
  judgeAccount: (accountId: string) => Promise<unknown>;
  logger: Logger;
  metrics: Pick<Metrics, 'deliveries' | 'bounces'>;
}
