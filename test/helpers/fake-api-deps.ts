import type { EmailDraft } from '../../src/domain/email-draft.js';
import { createEmailApi, type EmailApiDeps } from '../../src/api/email-api.js';
import { createGuard } from '../../src/api/guard.js';
import { AppError } from '../../src/errors.js';
import type { AuthService, Principal } from '../../src/services/auth-service.js';
import { createMemoryBuckets } from '../../src/services/memory-buckets.js';
import { createRateLimiter } from '../../src/services/rate-limiter.js';
import type { SendResult, SendService } from '../../src/services/send-service.js';
import type { UsageRecorder } from '../../src/services/usage-recorder.js';

/** The one key the fake auth knows. */
export const TEST_KEY = 'mk_test_in_memory_key';
export const SENT_ID = 'em_01jabcdefghjkmnpqrstvwxyz0';

const PRINCIPAL: Principal = {
  keyId: 'key_1',
  accountId: 'acc_1',
  permission: 'all',
  allowedDomains: [],
  accountStatus: 'healthy',
  dailyQuota: 100,
};

/**
 * The email API (the real handlers and guard) over fakes at the service seam: one known key, a rate limit
 * that never runs out, and a send service that accepts everything and remembers what it was given. The
 * services not faked here are not reached by the adapter tests.
 */
export function createFakeEmailApi() {
  const sent: EmailDraft[] = [];
  // The guard hands over the credential already taken out of `Authorization: Bearer ...`. Nothing is cached
  // here: a send is admitted as any other call.
  const authenticate = async (key: string | undefined) => {
    if (key !== TEST_KEY) throw new AppError('unauthorized', 'Invalid or missing API key');
    return PRINCIPAL;
  };
  const auth = { authenticate, authenticateCached: authenticate } as unknown as AuthService;
  const usage = { request: () => {} } as unknown as UsageRecorder;
  const send = {
    send: async (_principal: Principal, draft: EmailDraft): Promise<SendResult> => {
      sent.push(draft);
      return { id: SENT_ID, messageId: '', status: 'pending' };
    },
  } as SendService;
  const guard = createGuard({
    auth,
    rateLimiter: createRateLimiter({ rate: 1000, store: createMemoryBuckets() }),
    usage,
  });
  const emailApi = createEmailApi({ guard, send } as unknown as EmailApiDeps);
  return { emailApi, guard, sent };
}
