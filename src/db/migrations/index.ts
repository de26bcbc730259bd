import type { Tx } from '../sql.js';
import * as initialSchema from './0001-initial-schema.js';
import * as jobWorkflows from './0002-job-workflows.js';
import * as eventsWebhooksHealth from './0003-events-webhooks-health.js';
import * as parsedMailboxes from './0004-parsed-mailboxes.js';
import * as trackingRepeats from './0005-tracking-repeats.js';
import * as domainAuthentication from './0006-domain-authentication.js';
import * as remainingRecipients from './0007-remaining-recipients.js';
import * as eventsFeed from './0008-events-feed.js';
import * as webhookTrust from './0009-webhook-trust.js';
import * as inlineAttachments from './0010-inline-attachments.js';
import * as rateBuckets from './0011-rate-buckets.js';
import * as emailTraceContext from './0012-email-trace-context.js';
import * as dataRetention from './0013-data-retention.js';
import * as listCounts from './0014-list-counts.js';
import * as countedMovesPerStatement from './0015-counted-moves-per-statement.js';
import * as webhookFanOutPerStatement from './0016-webhook-fan-out-per-statement.js';
import * as canonicalAddresses from './0017-canonical-addresses.js';
import * as complaintSources from './0019-complaint-sources.js';
import * as answeredCopies from './0020-answered-copies.js';
import * as schemaComments from './0021-schema-comments.js';
import * as templates from './0022-templates.js';
import * as emailTemplates from './0023-email-templates.js';
import * as templateChanges from './0024-template-changes.js';
import * as streamsAndSuppressionScopes from './0025-streams-and-suppression-scopes.js';
import * as unsubscribeEventsAndBranding from './0028-unsubscribe-events-and-branding.js';
import * as inboundMail from './0029-inbound-mail.js';
import * as selfService from './0030-self-service.js';
import * as statsRollup from './0031-stats-rollup.js';
import * as egress from './0032-egress.js';
import * as hotPathWrites from './0033-hot-path-writes.js';
import * as scheduledMovesPerStatement from './0034-scheduled-moves-per-statement.js';
import * as noEmailReferenceChecks from './0035-no-email-reference-checks.js';
import * as counterSlotPerConnection from './0036-counter-slot-per-connection.js';
import * as quotaInAccept from './0037-quota-in-accept.js';
import * as cachedPrincipals from './0038-cached-principals.js';

/**
 * Forward-only migrations, applied in order. Never edit one that has shipped: add the next. A migration is
 * SQL, and where SQL cannot do the work (UTS #46, say) also a step in TypeScript run after it in the same
 * transaction: db/migrate.ts applies every pending migration in one transaction, under an advisory lock.
 */
export const MIGRATIONS: readonly { version: number; name: string; sql: string; run?: (tx: Tx) => Promise<void> }[] = [
  { version: 1, name: 'initial-schema', sql: initialSchema.sql },
  { version: 2, name: 'job-workflows', sql: jobWorkflows.sql },
  { version: 3, name: 'events-webhooks-health', sql: eventsWebhooksHealth.sql },
  { version: 4, name: 'parsed-mailboxes', sql: parsedMailboxes.sql },
  { version: 5, name: 'tracking-repeats', sql: trackingRepeats.sql },
  { version: 6, name: 'domain-authentication', sql: domainAuthentication.sql },
  { version: 7, name: 'remaining-recipients', sql: remainingRecipients.sql },
  { version: 8, name: 'events-feed', sql: eventsFeed.sql },
  { version: 9, name: 'webhook-trust', sql: webhookTrust.sql },
  { version: 10, name: 'inline-attachments', sql: inlineAttachments.sql },
  { version: 11, name: 'rate-buckets', sql: rateBuckets.sql },
  { version: 12, name: 'email-trace-context', sql: emailTraceContext.sql },
  { version: 13, name: 'data-retention', sql: dataRetention.sql },
  { version: 14, name: 'list-counts', sql: listCounts.sql },
  { version: 15, name: 'counted-moves-per-statement', sql: countedMovesPerStatement.sql },
  { version: 16, name: 'webhook-fan-out-per-statement', sql: webhookFanOutPerStatement.sql },
  { version: 17, name: 'canonical-addresses', sql: canonicalAddresses.sql, run: canonicalAddresses.run },
  { version: 19, name: 'complaint-sources', sql: complaintSources.sql },
  { version: 20, name: 'answered-copies', sql: answeredCopies.sql },
  { version: 21, name: 'schema-comments', sql: schemaComments.sql },
  { version: 22, name: 'templates', sql: templates.sql },
  { version: 23, name: 'email-templates', sql: emailTemplates.sql },
  { version: 24, name: 'template-changes', sql: templateChanges.sql },
  { version: 25, name: 'streams-and-suppression-scopes', sql: streamsAndSuppressionScopes.sql },
  { version: 28, name: 'unsubscribe-events-and-branding', sql: unsubscribeEventsAndBranding.sql },
  { version: 29, name: 'inbound-mail', sql: inboundMail.sql },
  { version: 30, name: 'self-service', sql: selfService.sql },
  { version: 31, name: 'stats-rollup', sql: statsRollup.sql },
  { version: 32, name: 'egress', sql: egress.sql },
  { version: 33, name: 'hot-path-writes', sql: hotPathWrites.sql },
  { version: 34, name: 'scheduled-moves-per-statement', sql: scheduledMovesPerStatement.sql },
  { version: 35, name: 'no-email-reference-checks', sql: noEmailReferenceChecks.sql },
  { version: 36, name: 'counter-slot-per-connection', sql: counterSlotPerConnection.sql },
  { version: 37, name: 'quota-in-accept', sql: quotaInAccept.sql },
  { version: 38, name: 'cached-principals', sql: cachedPrincipals.sql },
];
