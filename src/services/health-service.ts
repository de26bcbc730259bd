import type { AccountsRepo } from '../db/index.js';
import type { EventsRepo } from '../db/index.js';
import { STREAMS, type AccountStatus, type Stream } from '../domain/catalog.js';
import { COMPLIANCE, complianceOf, type Compliance } from '../domain/compliance.js';
import { HEALTH_POLICY, healthWindowStart, judgeHealth, rates } from '../domain/health.js';
import type { Logger } from '../logger.js';

/** The health window's figures of one stream's mail, each rate judged on that stream alone. */
export interface StreamHealth {
  stream: Stream;
  sent: number;
  bounceRate: number;
  complaintRate: number;
}

/** The rates the policy judges now: of the whole mail, and of each stream's. */
export interface HealthRates {
  bounceRate: number;
  complaintRate: number;
  streams: StreamHealth[];
}

export interface HealthDeps {
  accounts: Pick<AccountsRepo, 'get' | 'moveHealth' | 'toJudge'>;
  events: Pick<EventsRepo, 'healthCounts' | 'streamActivity'>;
  logger: Logger;
  now: () => Date;
}

/**
 * Applies the account health policy (domain/health.ts). It runs after every counted bounce or complaint,
 * and from the worker's sweep for accounts in review (recovery needs no new event).
 */
export function createHealthService(deps: HealthDeps) {
  async function counts(account: { id: string; statusChangedAt: Date }) {
    const now = deps.now();
    return { now, ...(await deps.events.healthCounts(account.id, healthWindowStart(account.statusChangedAt, now))) };
  }

  return {
    /** Judges one account and moves it if the policy says so; answers its status afterwards. */
    async evaluate(accountId: string): Promise<AccountStatus | undefined> {
      const account = await deps.accounts.get(accountId);
      if (!account) return undefined;
      if (account.status !== 'healthy' && account.status !== 'review') return account.status;
      const c = await counts(account);
      const next = judgeHealth({ status: account.status, statusChangedAt: account.statusChangedAt, ...c });
      if (next === account.status) return next;
      if (!(await deps.accounts.moveHealth(accountId, account.status, next, HEALTH_POLICY.reviewQuotaFactor)))
        return undefined;
      deps.logger.warn(
        { accountId, from: account.status, to: next, sent: c.sent, bounced: c.bounced, complained: c.complained },
        'account health changed',
      );
      return next;
    },

    /** The rates the policy judges now, for operators. */
    async rates(account: { id: string; statusChangedAt: Date }): Promise<HealthRates> {
      const c = await counts(account);
      return {
        ...rates(c),
        streams: STREAMS.map((stream) => ({ stream, sent: c.byStream[stream].sent, ...rates(c.byStream[stream]) })),
      };
    },

    /** The last 7 days' complaint and unsubscribe rates per stream, against the 0.3 % line (compliance.ts). */
    async compliance(accountId: string): Promise<Compliance> {
      const since = new Date(deps.now().getTime() - COMPLIANCE.windowDays * 24 * 3_600_000);
      return complianceOf(await deps.events.streamActivity(accountId, since));
    },

    /**
     * Judges the accounts whose status may change without a new bounce: recovery from review after a quiet
     * day, and healthy accounts whose recent bounces count once enough was sent.
     */
    async sweep(): Promise<void> {
      const since = new Date(deps.now().getTime() - HEALTH_POLICY.windowHours * 3_600_000);
      for (const id of await deps.accounts.toJudge(since)) await this.evaluate(id);
    },
  };
}
export type HealthService = ReturnType<typeof createHealthService>;
