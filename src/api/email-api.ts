import type { ServiceImpl } from '@connectrpc/connect';
import type { EmailService } from '../gen/mail/v1/email_service_pb.js';
import { assertAllowed } from '../domain/permissions.js';
import { notImplemented } from '../errors.js';
import type { EmailQueryService } from '../services/email-query-service.js';
import type { Principal } from '../services/auth-service.js';
import type { SendService } from '../services/send-service.js';
import type { CallContext } from './call-context.js';
import type { Guard } from './guard.js';
import { presentEmail, presentEmailSummary } from './presenters.js';

type EmailApi = {
  [K in keyof ServiceImpl<typeof EmailService>]: (
    req: Parameters<ServiceImpl<typeof EmailService>[K]>[0],
    ctx: CallContext,
  ) => ReturnType<ServiceImpl<typeof EmailService>[K]>;
};

export interface EmailApiDeps {
  guard: Guard;
  send: SendService;
  query: EmailQueryService;
}

const idempotencyKey = (ctx: CallContext) => ctx.requestHeader.get('idempotency-key') ?? undefined;

/** mail.v1.EmailService, once, for both adapters: each RPC is a guarded call of a use case. */
export function createEmailApi(deps: EmailApiDeps): EmailApi {
  const guard = deps.guard.guarded;
  return {
    sendEmail: (req, ctx) => guard(ctx, (p) => deps.send.send(p, req, idempotencyKey(ctx))),

    getEmail: (req, ctx) =>
      guard(ctx, async (p) => {
        const { email, attachments } = await deps.query.get(p, req.id);
        return presentEmail(email, attachments);
      }),

    listEmails: (req, ctx) =>
      guard(ctx, async (p) => {
        const { rows, total } = await deps.query.list(p, req);
        return { data: rows.map(presentEmailSummary), total };
      }),

    // Scheduled sends and batch jobs are a later capability: the RPCs exist in the schema and answer 501
    // after the usual authentication and permission checks, never a fake success.
    scheduleEmail: (_req, ctx) => guard(ctx, async (p) => pending(p, 'send', 'Scheduled sending')),
    listScheduledEmails: (_req, ctx) => guard(ctx, async (p) => pending(p, 'read', 'Listing scheduled emails')),
    getScheduledEmail: (_req, ctx) => guard(ctx, async (p) => pending(p, 'read', 'Reading a scheduled email')),
    cancelScheduledEmail: (_req, ctx) => guard(ctx, async (p) => pending(p, 'cancel', 'Cancelling a scheduled email')),
    sendBatch: (_req, ctx) => guard(ctx, async (p) => pending(p, 'send', 'Batch sending')),
    listBatchJobs: (_req, ctx) => guard(ctx, async (p) => pending(p, 'read', 'Listing batch jobs')),
    getBatchJob: (_req, ctx) => guard(ctx, async (p) => pending(p, 'read', 'Reading a batch job')),
  };
}

function pending(p: Principal, op: 'read' | 'send' | 'cancel', what: string): never {
  assertAllowed(p.permission, p.accountStatus, op);
  throw notImplemented(what);
}
