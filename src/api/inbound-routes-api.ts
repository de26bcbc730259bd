import type { MessageInitShape } from '@bufbuild/protobuf';
import { routeMatch, type InboundRouteRow } from '../domain/entities/inbound.js';
import type { AdminService } from '../gen/mail/v1/admin_service_pb.js';
import type { EmailService } from '../gen/mail/v1/email_service_pb.js';
import type { InboundRouteSchema } from '../gen/mail/v1/inbound_pb.js';
import type { InboundRoutesService } from '../services/inbound-routes-service.js';
import type { CallContext, Handlers } from './call-context.js';
import { permitting, type Guard } from './guard.js';
import { iso } from './presenters.js';

type RouteRpcs = 'createInboundRoute' | 'listInboundRoutes' | 'deleteInboundRoute';
type AccountRouteRpcs = 'createAccountInboundRoute' | 'listAccountInboundRoutes' | 'deleteAccountInboundRoute';

export interface InboundRoutesApiDeps {
  inboundRoutes: InboundRoutesService;
}

/** Runs a call once the admin token is admitted. */
type Admit = <T>(ctx: CallContext, run: () => Promise<T>) => Promise<T>;

/** A route as the API shows it (CONTRACT.md): `{id, match, created_at}`. */
export const presentInboundRoute = (r: InboundRouteRow): MessageInitShape<typeof InboundRouteSchema> => ({
  id: r.id,
  match: routeMatch(r),
  createdAt: iso(r.createdAt),
});

const listed = ({ rows, total }: { rows: InboundRouteRow[]; total: number }) => ({
  routes: rows.map(presentInboundRoute),
  total,
});
const deleted = (id: string) => ({ success: true, message: `inbound route ${id} deleted` });

/**
 * The inbound route RPCs of mail.v1.EmailService (CONTRACT.md "Inbound mail"). Changing routes needs a key with
 * permission `all`; reading them, `all` or `read_only`.
 */
export function createInboundRoutesApi(
  deps: InboundRoutesApiDeps & { guard: Guard },
): Pick<Handlers<typeof EmailService>, RouteRpcs> {
  const { inboundRoutes } = deps;
  const manage = permitting(deps.guard, 'manage_inbound');
  const read = permitting(deps.guard, 'read_inbound');
  return {
    createInboundRoute: (req, ctx) =>
      manage(ctx, async (a) => presentInboundRoute(await inboundRoutes.create(a, req.match))),
    listInboundRoutes: (req, ctx) => read(ctx, async (a) => listed(await inboundRoutes.list(a, req))),
    deleteInboundRoute: (req, ctx) =>
      manage(ctx, async (a) => {
        await inboundRoutes.delete(a, req.id);
        return deleted(req.id);
      }),
  };
}

/**
 * An account's inbound routes for the console (mail.v1.AdminService): the operator acts as the account, through
 * the same rules as its API keys' calls; an unknown account is a 404. The delete names the route alone.
 */
export function adminInboundRouteCalls(
  deps: InboundRoutesApiDeps,
  admin: Admit,
): Pick<Handlers<typeof AdminService>, AccountRouteRpcs> {
  const { inboundRoutes } = deps;
  const inAccount = <T>(ctx: CallContext, accountId: string, run: () => Promise<T>) =>
    admin(ctx, async () => {
      await inboundRoutes.assertAccount(accountId);
      return run();
    });
  return {
    createAccountInboundRoute: (req, ctx) =>
      inAccount(ctx, req.accountId, async () =>
        presentInboundRoute(await inboundRoutes.create(req.accountId, req.match)),
      ),
    listAccountInboundRoutes: (req, ctx) =>
      inAccount(ctx, req.accountId, async () => listed(await inboundRoutes.list(req.accountId, req))),
    deleteAccountInboundRoute: (req, ctx) =>
      admin(ctx, async () => {
        await inboundRoutes.deleteAny(req.id);
        return deleted(req.id);
      }),
  };
}
