import type {
  DeleteInboundRouteResponse,
  InboundRoute,
  ListInboundRoutesResponse,
} from '../../src/gen/mail/v1/inbound_pb.js';
import { usageError } from './base-command.js';
import { table } from './format.js';
import { InboundCommand } from './inbound-command.js';
import type { AdminClient, EmailClient } from './rpc.js';

/**
 * An account's inbound routes, changed either as the account (its API key, the public API) or as the operator
 * (the admin token, the management API, the account named by --account): the same commands for both, as the
 * inbox's (inbound-command.ts).
 */
export interface RouteBook {
  create(match: string): Promise<InboundRoute>;
  list(req: { page: number; pageSize: number }): Promise<ListInboundRoutesResponse>;
  delete(id: string): Promise<DeleteInboundRouteResponse>;
}

/** The public API's route calls, as the API key's account. */
export function accountRoutes(api: EmailClient): RouteBook {
  return {
    create: (match) => api.createInboundRoute({ match }),
    list: (req) => api.listInboundRoutes(req),
    delete: (id) => api.deleteInboundRoute({ id }),
  };
}

/** The management API's route calls; `accountId` is the account a route is made in or listed of (a delete names the route alone). */
export function operatorRoutes(api: AdminClient, accountId: string | undefined): RouteBook {
  const account = (): string => {
    if (accountId === undefined) throw usageError('--account is needed to add or list routes with the admin token');
    return accountId;
  };
  return {
    create: (match) => api.createAccountInboundRoute({ accountId: account(), match }),
    list: (req) => api.listAccountInboundRoutes({ accountId: account(), ...req }),
    delete: (id) => api.deleteAccountInboundRoute({ id }),
  };
}

/** The route commands: the API key's account, or (operators) the admin token with `operator` given. */
export abstract class InboundRoutesCommand extends InboundCommand {
  protected routeBook(
    flags: { url: string; 'api-key'?: string | undefined; 'admin-token'?: string | undefined },
    operator: { accountId?: string | undefined } | undefined,
  ): Promise<RouteBook> {
    return this.acting(flags, operator, { account: accountRoutes, operator: operatorRoutes });
  }
}

export const ROUTE_HEADERS = ['ID', 'MATCH', 'CREATED'];
export const routeRows = (routes: InboundRoute[]): string[][] => routes.map((r) => [r.id, r.match, r.createdAt]);
/** One route, as its table's row (headers included). */
export const showRoute = (r: InboundRoute): string => table(ROUTE_HEADERS, routeRows([r]));
