import type { MessageInitShape } from '@bufbuild/protobuf';
import type { GetStatsResponseSchema } from '../gen/mail/v1/account_pb.js';
import type { AdminService } from '../gen/mail/v1/admin_service_pb.js';
import type { EmailService } from '../gen/mail/v1/email_service_pb.js';
import type { StatsAnswer, StatsService } from '../services/stats-service.js';
import type { CallContext, Handlers } from './call-context.js';
import { permitting, type Guard } from './guard.js';

export interface StatsApiDeps {
  stats: StatsService;
}

/** Runs a call once the admin token is admitted. */
type Admit = <T>(ctx: CallContext, run: () => Promise<T>) => Promise<T>;

/** GET /stats's answer: `{stats: [{key, accepted, ...}], from, to, group_by}` (sample_replies by recipient domain). */
const presentStats = (a: StatsAnswer): MessageInitShape<typeof GetStatsResponseSchema> => ({
  stats: a.rows.map((r) => ({ ...r })),
  from: a.from,
  to: a.to,
  groupBy: a.groupBy,
});

/** GET /stats (CONTRACT.md "Stats and timelines"): keys of permission `all` or `read_only`. */
export function createStatsApi(deps: StatsApiDeps & { guard: Guard }): Pick<Handlers<typeof EmailService>, 'getStats'> {
  const read = permitting(deps.guard, 'read_stats');
  return {
    getStats: (req, ctx) => read(ctx, async (accountId) => presentStats(await deps.stats.get(accountId, req))),
  };
}

/** The same stats of an account for the operator (mail.v1.AdminService); an unknown account is a 404. */
export function adminStatsCalls(
  deps: StatsApiDeps,
  admin: Admit,
): Pick<Handlers<typeof AdminService>, 'getAccountGroupedStats'> {
  return {
    getAccountGroupedStats: (req, ctx) =>
      admin(ctx, async () => {
        await deps.stats.assertAccount(req.accountId);
        return presentStats(await deps.stats.get(req.accountId, req));
      }),
  };
}
