import { Code, ConnectError } from '@connectrpc/connect';
import type { AdminService } from '../gen/mail/v1/admin_service_pb.js';
import type { EmailService } from '../gen/mail/v1/email_service_pb.js';
import type { CallContext, Handlers } from './call-context.js';
import type { Guard } from './guard.js';

// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled in with the stats service (issue 27)
export interface StatsApiDeps {}

/** Runs a call once the admin token is admitted. */
type Admit = <T>(ctx: CallContext, run: () => Promise<T>) => Promise<T>;

const notYet = (): never => {
  throw new ConnectError('stats are not built yet', Code.Unimplemented);
};

/** GET /stats (CONTRACT.md "Stats and timelines"). */
export function createStatsApi(
  _deps: StatsApiDeps & { guard: Guard },
): Pick<Handlers<typeof EmailService>, 'getStats'> {
  return { getStats: notYet };
}

/** The same stats of an account for the operator (mail.v1.AdminService). */
export function adminStatsCalls(
  _deps: StatsApiDeps,
  _admin: Admit,
): Pick<Handlers<typeof AdminService>, 'getAccountGroupedStats'> {
  return { getAccountGroupedStats: notYet };
}
