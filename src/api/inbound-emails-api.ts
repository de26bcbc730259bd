import { Code, ConnectError } from '@connectrpc/connect';
import type { AdminService } from '../gen/mail/v1/admin_service_pb.js';
import type { EmailService } from '../gen/mail/v1/email_service_pb.js';
import type { CallContext, Handlers } from './call-context.js';
import type { Guard } from './guard.js';

type InboundEmailRpcs = 'listInboundEmails' | 'getInboundEmail' | 'getInboundRaw' | 'getInboundAttachment';
type AccountInboundEmailRpcs =
  'listAccountInboundEmails' | 'getAccountInboundEmail' | 'getAccountInboundRaw' | 'getAccountInboundAttachment';

// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled in with the inbound emails service (issue 26)
export interface InboundEmailsApiDeps {}

/** Runs a call once the admin token is admitted. */
type Admit = <T>(ctx: CallContext, run: () => Promise<T>) => Promise<T>;

const notYet = (): never => {
  throw new ConnectError('inbound mail is not built yet', Code.Unimplemented);
};

/** The inbound email RPCs of mail.v1.EmailService (CONTRACT.md "Inbound mail"). */
export function createInboundEmailsApi(
  _deps: InboundEmailsApiDeps & { guard: Guard },
): Pick<Handlers<typeof EmailService>, InboundEmailRpcs> {
  return { listInboundEmails: notYet, getInboundEmail: notYet, getInboundRaw: notYet, getInboundAttachment: notYet };
}

/** An account's inbound mail for the console (mail.v1.AdminService). */
export function adminInboundEmailCalls(
  _deps: InboundEmailsApiDeps,
  _admin: Admit,
): Pick<Handlers<typeof AdminService>, AccountInboundEmailRpcs> {
  return {
    listAccountInboundEmails: notYet,
    getAccountInboundEmail: notYet,
    getAccountInboundRaw: notYet,
    getAccountInboundAttachment: notYet,
  };
}
