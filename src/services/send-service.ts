import type { EmailsRepo, NewEmail } from '../db/repos/emails-repo.js';
import type { QuotaRepo } from '../db/repos/quota-repo.js';
import type { EmailDraft } from '../domain/email-draft.js';
import { validateDraft } from '../domain/email-draft.js';
import { assertAllowed } from '../domain/permissions.js';
import { quotaExceeded, utcDay } from '../domain/quota.js';
import { newId } from '../ids.js';
import type { Principal } from './auth-service.js';
import type { Idempotency } from './idempotency.js';
import type { SenderCheck } from './sender-check.js';
import type { UsageRecorder } from './usage-recorder.js';

export interface SendResult {
  id: string;
  messageId: string;
  status: 'pending';
}

export interface SendDeps {
  emails: Pick<EmailsRepo, 'accept'>;
  quota: Pick<QuotaRepo, 'reserve' | 'release' | 'used'>;
  idempotency: Idempotency;
  assertMaySendFrom: SenderCheck;
  usage: Pick<UsageRecorder, 'emailsSent'>;
  /** Wakes the dispatcher: there is something new in the delivery queue. */
  notifyQueued: () => void;
  now: () => Date;
}

/**
 * Immediate sends. The request is answered only once the email, its attachments and its place in the
 * delivery queue are committed together, so an answered email is never lost; delivery happens later,
 * from the queue, on Temporal.
 */
export function createSendService(deps: SendDeps) {
  /** Counts `n` emails against today's quota or refuses with the spec's 429. */
  async function reserveQuota(principal: Principal, n: number, now: Date): Promise<string> {
    const day = utcDay(now);
    const used = await deps.quota.reserve(principal.accountId, day, n, principal.dailyQuota);
    if (used === undefined) {
      throw quotaExceeded(await deps.quota.used(principal.accountId, day), principal.dailyQuota, now);
    }
    return day;
  }

  return {
    async send(principal: Principal, draft: EmailDraft, idempotencyKey?: string): Promise<SendResult> {
      assertAllowed(principal.permission, principal.accountStatus, 'send');
      const valid = validateDraft(draft);
      await deps.assertMaySendFrom(principal, valid.sender.domain);

      const begun = await deps.idempotency.begin<SendResult>(principal.accountId, idempotencyKey, 'send', draft);
      if ('replay' in begun) return begun.replay;

      const now = deps.now();
      const id = newId('email');
      const email: NewEmail = {
        id, accountId: principal.accountId, apiKeyId: principal.keyId, jobType: 'direct', jobId: '',
        headerMessageId: `<${id}@${valid.sender.domain}>`, draft: valid,
      };
      const result: SendResult = { id, messageId: '', status: 'pending' };
      let day: string | undefined;
      try {
        day = await reserveQuota(principal, 1, now);
        await deps.emails.accept([email], {
          enqueue: true,
          idempotency: begun.scope && { ...begun.scope, response: result },
        });
      } catch (err) {
        if (day !== undefined) await deps.quota.release(principal.accountId, day, 1).catch(() => {});
        await deps.idempotency.abandon(begun.scope).catch(() => {});
        throw err;
      }
      deps.usage.emailsSent(principal.keyId, 1);
      deps.notifyQueued();
      return result;
    },
  };
}
export type SendService = ReturnType<typeof createSendService>;
