import type { BatchRepo } from '../db/index.js';
import type { NewEmail } from '../domain/entities/emails.js';
import { BATCH_STATUSES } from '../domain/catalog.js';
import type { EmailDraft } from '../domain/email-draft.js';
import { LIMITS } from '../domain/limits.js';
import { assertAllowed } from '../domain/permissions.js';
import { invalid } from '../errors.js';
import { newId } from '../ids.js';
import type { Accept } from './acceptance.js';
import type { DraftPreparer } from './draft-preparer.js';
import type { Principal } from './auth-service.js';
import { ownedReads } from './owned-reads.js';
import type { SenderCheck } from './sender-check.js';
import type { UsageRecorder } from './usage-recorder.js';

export interface BatchDeps {
  batches: BatchRepo;
  accept: Accept;
  /** Renders each item's template and checks every rule of a send, naming the item. */
  drafts: Pick<DraftPreparer, 'prepareAll'>;
  assertMaySendFrom: SenderCheck;
  usage: Pick<UsageRecorder, 'emailsSent'>;
  /** Starts the job's workflow; a failed start is retried in the background (temporal/start-retrier), the sweep catching any left. */
  /** Starts the job's workflow, or hands the start to a background retrier; never rejects. */
  startWorkflow: (jobId: string) => Promise<unknown>;
}

export interface BatchResult {
  jobId: string;
  status: 'pending';
  totalCount: number;
}

/**
 * Batch sends: up to 100 emails validated whole (one bad item refuses the request, naming the item), then
 * stored with their job in one statement and sent by the job's workflow.
 */
export function createBatchService(deps: BatchDeps) {
  return {
    async send(principal: Principal, drafts: EmailDraft[], idempotencyKey?: string): Promise<BatchResult> {
      assertAllowed(principal.permission, principal.accountStatus, 'send');
      if (drafts.length === 0) throw invalid('emails is required: give from 1 to 100 emails');
      if (drafts.length > LIMITS.batchEmails) {
        throw invalid(`emails: ${drafts.length} emails exceed the maximum of ${LIMITS.batchEmails} per batch`);
      }
      const valid = await deps.drafts.prepareAll(principal.accountId, drafts);
      for (const domain of new Set(valid.map((v) => v.senderDomain))) await deps.assertMaySendFrom(principal, domain);

      const jobId = newId('batch');
      const emails: NewEmail[] = valid.map((draft) => ({
        id: newId('email'),
        accountId: principal.accountId,
        apiKeyId: principal.keyId,
        jobType: 'batch',
        jobId,
        draft,
      }));
      const result = await deps.accept<BatchResult>({
        principal,
        operation: 'batch',
        idempotencyKey,
        request: drafts,
        count: emails.length,
        answer: { jobId, status: 'pending', totalCount: emails.length },
        store: (idempotency) =>
          deps.batches.create({
            id: jobId,
            accountId: principal.accountId,
            apiKeyId: principal.keyId,
            emails,
            ...(idempotency ? { idempotency } : {}),
          }),
        rows: { table: 'emails', ids: emails.map((e) => e.id) },
      });
      if (result.jobId === jobId) {
        deps.usage.emailsSent(principal.keyId, emails.length);
        await deps.startWorkflow(jobId);
      }
      return result;
    },

    ...ownedReads(deps.batches, 'batch job', BATCH_STATUSES, (status) => status),
  };
}
export type BatchService = ReturnType<typeof createBatchService>;
