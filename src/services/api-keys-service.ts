import type { AccountsRepo } from '../db/index.js';
import type { ApiKeyRow } from '../domain/entities/api-keys.js';
import type { ApiKeysRepo } from '../db/index.js';
import { isOneOf, PERMISSIONS } from '../domain/catalog.js';
import { asciiDomain } from '../domain/domain-name.js';
import { toPage } from '../domain/pagination.js';
import { utcDay } from '../domain/quota.js';
import { parseZonedTime } from '../domain/schedule.js';
import { invalid, notFound } from '../errors.js';
import { newId } from '../ids.js';
import type { UsageRecorder } from './usage-recorder.js';
import { generateApiKey } from './secrets.js';

export const NAME_MAX = 200;
export const DOMAIN = /^[a-z0-9.-]{1,253}$/;
// Longer than any domain can be written, even in Unicode with every character escaped in the answer.
const DOMAIN_MAX_INPUT = 1024;

/** A new key's own limits as asked (absent: none), before they are judged against the service's and the account's. */
export interface KeyLimitsInput {
  rateLimit?: number | undefined;
  dailyQuota?: number | undefined;
  expiresAt?: string | undefined;
}

/**
 * A key's own limits may only narrow what it could do anyway: at most the service's rate (MAILER_RATE_LIMIT, every
 * key's rate without one) and the account's daily quota, and an expiry still to come. Each refusal is a 400 naming
 * the field. (The account's quota may be lowered later: both are checked at every send, the lower one binds.)
 */
export function keyLimits(
  input: KeyLimitsInput,
  bounds: { maxRateLimit: number; accountDailyQuota: number; now: Date },
): { rateLimit: number | null; dailyQuota: number | null; expiresAt: Date | null } {
  const { rateLimit, dailyQuota, expiresAt } = input;
  if (rateLimit !== undefined && !(Number.isInteger(rateLimit) && rateLimit >= 1 && rateLimit <= bounds.maxRateLimit))
    throw invalid(
      `rate_limit must be from 1 to ${bounds.maxRateLimit} requests per second (the service's MAILER_RATE_LIMIT); got ${rateLimit}`,
    );
  if (
    dailyQuota !== undefined &&
    !(Number.isInteger(dailyQuota) && dailyQuota >= 0 && dailyQuota <= bounds.accountDailyQuota)
  )
    throw invalid(
      `daily_quota must be from 0 to ${bounds.accountDailyQuota} emails a day (the account's daily_quota); got ${dailyQuota}`,
    );
  let expires: Date | null = null;
  if (expiresAt !== undefined) {
    const at = parseZonedTime(expiresAt);
    if (!at)
      throw invalid(
        `expires_at: ${JSON.stringify(expiresAt.slice(0, 60))} is not an ISO 8601 time with a zone (e.g. 2026-01-01T09:00:00Z)`,
      );
    if (at.getTime() <= bounds.now.getTime()) throw invalid(`expires_at: ${at.toISOString()} is not in the future`);
    expires = at;
  }
  return { rateLimit: rateLimit ?? null, dailyQuota: dailyQuota ?? null, expiresAt: expires };
}

export function createApiKeysService(deps: {
  apiKeys: ApiKeysRepo;
  accounts: Pick<AccountsRepo, 'get'>;
  usage: Pick<UsageRecorder, 'flush'>;
  /** MAILER_RATE_LIMIT: the most a key's own rate_limit may be. */
  maxRateLimit: number;
  now: () => Date;
}) {
  return {
    /** Creates a key; the answer is the only place the key ever appears. */
    async create(
      accountId: string,
      input: { name: string; permission: string; allowedDomains: string[] } & KeyLimitsInput,
    ): Promise<ApiKeyRow & { key: string }> {
      const account = await deps.accounts.get(accountId);
      if (!account) throw notFound('account', accountId);
      const name = input.name.trim();
      if (name === '') throw invalid('name is required');
      if (name.length > NAME_MAX)
        throw invalid(`name: length ${name.length} exceeds the maximum of ${NAME_MAX} characters`);
      if (!isOneOf(PERMISSIONS, input.permission)) {
        throw invalid(`permission must be one of ${PERMISSIONS.join(', ')}; got "${input.permission}"`);
      }
      // In the one form sender domains are matched in (ASCII, lower case), so `bücher.de` allows `zoe@bücher.de`.
      // The ASCII pattern the OpenAPI document states is still taken as it was (lower-cased).
      const allowedDomains = input.allowedDomains.map((d, i) => {
        const written = d.trim().toLowerCase();
        const ascii = DOMAIN.test(written) ? written : d.length <= DOMAIN_MAX_INPUT ? asciiDomain(d) : undefined;
        if (ascii === undefined)
          throw invalid(
            `allowed_domains[${i}]: ${JSON.stringify(d.length > 80 ? `${d.slice(0, 80)}…` : d)} is not a domain name`,
          );
        return ascii;
      });
      const limits = keyLimits(input, {
        maxRateLimit: deps.maxRateLimit,
        accountDailyQuota: account.dailyQuota,
        now: deps.now(),
      });
      const { key, hash, prefix } = generateApiKey();
      const row = await deps.apiKeys.create({
        id: newId('apiKey'),
        accountId,
        name,
        permission: input.permission,
        allowedDomains,
        keyHash: hash,
        keyPrefix: prefix,
        ...limits,
      });
      return { ...row, key };
    },

    /** A page of the account's keys (`page` and `pageSize` as given, 0: the default), with today's usage. */
    async list(
      accountId: string,
      q: { page: number; pageSize: number } = { page: 0, pageSize: 0 },
    ): Promise<{ rows: ApiKeyRow[]; total: number }> {
      const page = toPage(q.page, q.pageSize, 'page_size');
      if (!(await deps.accounts.get(accountId))) throw notFound('account', accountId);
      await deps.usage.flush();
      return deps.apiKeys.listByAccount(accountId, page, utcDay(deps.now()));
    },

    /**
     * The key fails with 401 from the next request on: every request reads its key afresh. With `accountId` (a
     * key deleting one of its account's keys), another account's key is a 404 in the same words as an unknown
     * one. A key may delete itself, as Resend allows: the request that does is answered, the next one is a 401.
     */
    async delete(id: string, accountId?: string): Promise<void> {
      if (!(await deps.apiKeys.softDelete(id, accountId))) throw notFound('API key', id);
    },
  };
}
export type ApiKeysService = ReturnType<typeof createApiKeysService>;
