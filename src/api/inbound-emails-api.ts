import type { AdminService } from '../gen/mail/v1/admin_service_pb.js';
import type { EmailService } from '../gen/mail/v1/email_service_pb.js';
import type { InboundEmailsService } from '../services/inbound-emails-service.js';
import type { CallContext, Handlers } from './call-context.js';
import { permitting, type Guard } from './guard.js';
import { contentChunks, presentInboundEmail } from './inbound-presenters.js';

type InboundEmailRpcs = 'listInboundEmails' | 'getInboundEmail' | 'getInboundRaw' | 'getInboundAttachment';
type AccountInboundEmailRpcs =
  'listAccountInboundEmails' | 'getAccountInboundEmail' | 'getAccountInboundRaw' | 'getAccountInboundAttachment';

export interface InboundEmailsApiDeps {
  inboundEmails: InboundEmailsService;
}

/** Runs a call once the admin token is admitted. */
type Admit = <T>(ctx: CallContext, run: () => Promise<T>) => Promise<T>;

/**
 * The inbound email RPCs of mail.v1.EmailService (CONTRACT.md "Inbound mail"): keys with permission `all` or
 * `read_only` read the account's inbound mail (read_inbound); a `send_only` key is refused (403). The raw message
 * and attachments stream in chunks; the REST gateway answers them as the body (bytes-routes.ts).
 */
export function createInboundEmailsApi(
  deps: InboundEmailsApiDeps & { guard: Guard },
): Pick<Handlers<typeof EmailService>, InboundEmailRpcs> {
  const { inboundEmails } = deps;
  const read = permitting(deps.guard, 'read_inbound');
  return {
    listInboundEmails: (req, ctx) =>
      read(ctx, async (a) => {
        const { rows, total } = await inboundEmails.list(a, req);
        return { inboundEmails: rows.map(presentInboundEmail), total };
      }),
    getInboundEmail: (req, ctx) => read(ctx, async (a) => presentInboundEmail(await inboundEmails.get(a, req.id))),
    getInboundRaw: (req, ctx) => contentChunks(() => read(ctx, (a) => inboundEmails.raw(a, req.id))),
    getInboundAttachment: (req, ctx) =>
      contentChunks(() => read(ctx, (a) => inboundEmails.attachment(a, req.id, req.n))),
  };
}

/** An account's inbound mail for the console (mail.v1.AdminService): the same reads, the account named. */
export function adminInboundEmailCalls(
  deps: InboundEmailsApiDeps,
  admin: Admit,
): Pick<Handlers<typeof AdminService>, AccountInboundEmailRpcs> {
  const { inboundEmails } = deps;
  return {
    listAccountInboundEmails: (req, ctx) =>
      admin(ctx, async () => {
        const { rows, total } = await inboundEmails.list(await inboundEmails.knownAccount(req.accountId), req);
        return { inboundEmails: rows.map(presentInboundEmail), total };
      }),
    getAccountInboundEmail: (req, ctx) =>
      admin(ctx, async () => presentInboundEmail(await inboundEmails.get(await inboundEmails.ownerOf(req.id), req.id))),
    getAccountInboundRaw: (req, ctx) =>
      contentChunks(() => admin(ctx, async () => inboundEmails.raw(await inboundEmails.ownerOf(req.id), req.id))),
    getAccountInboundAttachment: (req, ctx) =>
      contentChunks(() =>
        admin(ctx, async () => inboundEmails.attachment(await inboundEmails.ownerOf(req.id), req.id, req.n)),
      ),
  };
}
