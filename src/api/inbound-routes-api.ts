import { Code, ConnectError } from '@connectrpc/connect';
import type { AdminService } from '../gen/mail/v1/admin_service_pb.js';
import type { EmailService } from '../gen/mail/v1/email_service_pb.js';
import type { CallContext, Handlers } from './call-context.js';
import type { Guard } from './guard.js';

type RouteRpcs = 'createInboundRoute' | 'listInboundRoutes' | 'deleteInboundRoute';
type AccountRouteRpcs = 'createAccountInboundRoute' | 'listAccountInboundRoutes' | 'deleteAccountInboundRoute';

// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled in with the routes service (issue 26)
export interface InboundRoutesApiDeps {}

/** Runs a call once the admin token is admitted. */
type Admit = <T>(ctx: CallContext, run: () => Promise<T>) => Promise<T>;

const notYet = (): never => {
  throw new ConnectError('inbound routes are not built yet', Code.Unimplemented);
};

/** The inbound route RPCs of mail.v1.EmailService (CONTRACT.md "Inbound mail"). */
export function createInboundRoutesApi(
  _deps: InboundRoutesApiDeps & { guard: Guard },
): Pick<Handlers<typeof EmailService>, RouteRpcs> {
  return { createInboundRoute: notYet, listInboundRoutes: notYet, deleteInboundRoute: notYet };
}

/** An account's inbound routes for the console (mail.v1.AdminService). */
export function adminInboundRouteCalls(
  _deps: InboundRoutesApiDeps,
  _admin: Admit,
): Pick<Handlers<typeof AdminService>, AccountRouteRpcs> {
  return { createAccountInboundRoute: notYet, listAccountInboundRoutes: notYet, deleteAccountInboundRoute: notYet };
}
