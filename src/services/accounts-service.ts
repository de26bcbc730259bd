import type { AccountRow } from '../domain/entities/accounts.js';
import type { AccountsRepo } from '../db/index.js';
import { ACCOUNT_STATUSES, isOneOf } from '../domain/catalog.js';
import { brandingPatch } from '../domain/branding.js';
import { DAILY_QUOTA } from '../domain/limits.js';
import { utcDay } from '../domain/quota.js';
import { invalid, notFound } from '../errors.js';
import { newId } from '../ids.js';
import type { Compliance } from '../domain/compliance.js';
import type { HealthRates, HealthService } from './health-service.js';

/**
 * An account with today's usage, the rates its health is judged by (in all and per stream) and the last 7
 * days' complaint and unsubscribe rates per stream.
 */
export interface AccountWithStats extends AccountRow, HealthRates {
  sentToday: number;
  compliance: Compliance;
}

export const NAME_MAX = 200;
export const DAILY_QUOTA_MAX = 100_000_000;

/** Accounts, as operators manage them through the management API. */
export function createAccountsService(deps: {
  accounts: AccountsRepo;
  health: Pick<HealthService, 'rates' | 'compliance'>;
  now: () => Date;
}) {
  async function mustGet(id: string): Promise<AccountRow> {
    const account = await deps.accounts.get(id);
    if (!account) throw notFound('account', id);
    return account;
  }

  async function withStats(account: AccountRow): Promise<AccountWithStats> {
    const [sentToday, r, compliance] = await Promise.all([
      deps.accounts.usedToday(account.id, utcDay(deps.now())),
      deps.health.rates(account),
      deps.health.compliance(account.id),
    ]);
    return { ...account, sentToday, ...r, compliance };
  }

  return {
    async create(name: string): Promise<AccountRow> {
      const trimmed = name.trim();
      if (trimmed === '') throw invalid('name is required');
      if (trimmed.length > NAME_MAX)
        throw invalid(`name: length ${trimmed.length} exceeds the maximum of ${NAME_MAX} characters`);
      return deps.accounts.create({ id: newId('account'), name: trimmed, dailyQuota: DAILY_QUOTA.newAccount });
    },

    async get(id: string): Promise<AccountWithStats> {
      return withStats(await mustGet(id));
    },

    async list(): Promise<AccountWithStats[]> {
      return Promise.all((await deps.accounts.list()).map(withStats));
    },

    async update(
      id: string,
      patch: { status?: string; dailyQuota?: number; brandName?: string; brandLogoUrl?: string },
    ): Promise<AccountRow> {
      if (patch.status !== undefined && !isOneOf(ACCOUNT_STATUSES, patch.status)) {
        throw invalid(`status must be one of ${ACCOUNT_STATUSES.join(', ')}; got "${patch.status}"`);
      }
      if (patch.dailyQuota !== undefined && (patch.dailyQuota < 0 || patch.dailyQuota > DAILY_QUOTA_MAX)) {
        throw invalid(`daily_quota must be from 0 to ${DAILY_QUOTA_MAX}; got ${patch.dailyQuota}`);
      }
      const updated = await deps.accounts.update(id, {
        ...(patch.status !== undefined ? { status: patch.status as AccountRow['status'] } : {}),
        ...(patch.dailyQuota !== undefined ? { dailyQuota: patch.dailyQuota } : {}),
        ...brandingPatch(patch),
      });
      if (!updated) throw notFound('account', id);
      return updated;
    },

    mustGet,
  };
}
export type AccountsService = ReturnType<typeof createAccountsService>;
