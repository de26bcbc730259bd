import type { EmailsRepo } from '../db/index.js';
import type { NewEmail } from '../domain/entities/emails.js';
import type { EmailDraft } from '../domain/email-draft.js';
import { assertAllowed } from '../domain/permissions.js';
import { newId } from '../ids.js';
import { inSpan } from '../telemetry/spans.js';
import { createAcceptWriter } from './accept-writer.js';
import type { Accept } from './acceptance.js';
import type { DraftPreparer } from './draft-preparer.js';
import type { Principal } from './auth-service.js';
import type { SenderCheck } from './sender-check.js';
import type { UsageRecorder } from './usage-recorder.js';

export interface SendResult {
  id: string;
  messageId: string;
  status: 'pending';
}

export interface SendDeps {
  emails: Pick<EmailsRepo, 'accept'>;
  accept: Accept;
  /** Renders a named template and checks every rule of a send. */
  drafts: Pick<DraftPreparer, 'prepare'>;
  assertMaySendFrom: SenderCheck;
  usage: Pick<UsageRecorder, 'emailsSent'>;
  /** Wakes the dispatcher: there is something new in the delivery queue. */
  notifyQueued: () => void;
}

/**
 * Immediate sends. The request is answered only once the email, its attachments and its place in the
 * delivery queue are committed together, so an answered email is never lost; delivery happens later,
 * from the queue, on Temporal. Concurrent sends share their statement (accept-writer.ts).
 */
export function createSendService(deps: SendDeps) {
  const write = createAcceptWriter(deps.emails);
  return {
    send(principal: Principal, draft: EmailDraft, idempotencyKey?: string): Promise<SendResult> {
      return inSpan('send email', { attributes: { 'mailer.account.id': principal.accountId } }, async (span) => {
        const result = await send(principal, draft, idempotencyKey);
        // A reused Idempotency-Key answers the email it first made.
        span?.setAttribute('mailer.email.id', result.id);
        return result;
      });
    },
  };

  async function send(principal: Principal, draft: EmailDraft, idempotencyKey?: string): Promise<SendResult> {
    assertAllowed(principal.permission, principal.accountStatus, 'send');
    const valid = await deps.drafts.prepare(principal.accountId, draft);
    await deps.assertMaySendFrom(principal, valid.senderDomain);
    const id = newId('email');
    const email: NewEmail = {
      id,
      accountId: principal.accountId,
      apiKeyId: principal.keyId,
      jobType: 'direct',
      jobId: '',
      draft: valid,
    };
    // A cached key's claim goes into the statement that stores the email, whichever it is (auth-service.ts).
    const { claim } = principal;
    const result = await deps.accept<SendResult>({
      principal,
      operation: 'send',
      idempotencyKey,
      request: draft,
      count: 1,
      answer: { id, messageId: '', status: 'pending' },
      countsQuota: true,
      store: (idempotency, _now, quota) =>
        idempotency
          ? deps.emails.accept([email], {
              enqueue: true,
              idempotency,
              ...(quota ? { quota: [quota] } : {}),
              ...(claim ? { claims: [claim] } : {}),
            })
          : write({ email, ...(quota ? { quota } : {}), ...(claim ? { claim } : {}) }),
      rows: { table: 'emails', ids: [id] },
    });
    if (result.id === id) {
      // This email was committed (by the store, or found there when the commit's answer was lost): by a
      // statement that confirmed the claim, so the call's answer stands (api/guard.ts).
      if (claim) claim.confirmed = true;
      deps.usage.emailsSent(principal.keyId, 1);
      deps.notifyQueued();
    }
    return result;
  }
}
export type SendService = ReturnType<typeof createSendService>;
