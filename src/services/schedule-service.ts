import type { ScheduledRepo } from '../db/index.js';
import { SCHEDULED_FILTERS } from '../domain/catalog.js';
import type { EmailDraft } from '../domain/email-draft.js';
import { assertAllowed } from '../domain/permissions.js';
import { parseScheduledAt } from '../domain/schedule.js';
import { invalid, notFound } from '../errors.js';
import { newId } from '../ids.js';
import type { Accept } from './acceptance.js';
import type { DraftPreparer } from './draft-preparer.js';
import type { Principal } from './auth-service.js';
import { ownedReads } from './owned-reads.js';
import type { SenderCheck } from './sender-check.js';
import type { UsageRecorder } from './usage-recorder.js';

export interface ScheduleDeps {
  scheduled: ScheduledRepo;
  accept: Accept;
  /** Renders a named template and checks every rule of a send. */
  drafts: Pick<DraftPreparer, 'prepare'>;
  assertMaySendFrom: SenderCheck;
  usage: Pick<UsageRecorder, 'emailsSent'>;
  /** Makes sure a workflow will fire the email at its time (a delayed start); a failed start is retried in the background (temporal/start-retrier), the sweep catching any left. */
  startWorkflow: (id: string, scheduledAt: Date) => Promise<unknown>;
  now: () => Date;
}

export interface ScheduleResult {
  id: string;
  status: 'enqueued';
}

/**
 * Scheduled sends. Every rule of a single send applies at request time, quota included; the email is
 * created when the time comes, by the workflow of the second it is due in (a delayed start on Temporal).
 */
export function createScheduleService(deps: ScheduleDeps) {
  return {
    async schedule(
      principal: Principal,
      draft: EmailDraft & { scheduledAt: string },
      idempotencyKey?: string,
    ): Promise<ScheduleResult> {
      assertAllowed(principal.permission, principal.accountStatus, 'send');
      const { scheduledAt: rawAt, ...fields } = draft;
      const valid = await deps.drafts.prepare(principal.accountId, fields);
      const scheduledAt = parseScheduledAt(rawAt, deps.now());
      await deps.assertMaySendFrom(principal, valid.senderDomain);
      const id = newId('scheduled');
      const result = await deps.accept<ScheduleResult>({
        principal,
        operation: 'schedule',
        idempotencyKey,
        request: draft,
        count: 1,
        answer: { id, status: 'enqueued' },
        store: (idempotency) =>
          deps.scheduled.create({
            id,
            accountId: principal.accountId,
            apiKeyId: principal.keyId,
            draft: valid,
            scheduledAt,
            ...(idempotency ? { idempotency } : {}),
          }),
        rows: { table: 'scheduled_emails', ids: [id] },
      });
      if (result.id === id) {
        deps.usage.emailsSent(principal.keyId, 1);
        await deps.startWorkflow(id, scheduledAt);
      }
      return result;
    },

    // `scheduled` names the emails still waiting, stored as enqueued.
    ...ownedReads(deps.scheduled, 'scheduled email', SCHEDULED_FILTERS, (filter) =>
      filter === 'scheduled' ? 'enqueued' : filter,
    ),

    /** Cancelled stays cancelled (200 again); one already sent cannot be (400). */
    async cancel(principal: Principal, id: string): Promise<{ success: true; message: string }> {
      assertAllowed(principal.permission, principal.accountStatus, 'cancel');
      const outcome = await deps.scheduled.cancel(principal.accountId, id);
      switch (outcome) {
        case 'not_found':
          throw notFound('scheduled email', id);
        case 'already_sent':
          throw invalid(`scheduled email ${id} was already sent and cannot be cancelled`);
        case 'already_cancelled':
          return { success: true, message: `scheduled email ${id} was already cancelled` };
        case 'cancelled':
          // Nothing to stop: the second's workflow fires only rows still waiting.
          return { success: true, message: `scheduled email ${id} cancelled` };
      }
    },
  };
}
export type ScheduleService = ReturnType<typeof createScheduleService>;
