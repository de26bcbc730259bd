import type { DomainsRepo } from '../db/repos/domains-repo.js';
import { assertSenderDomainAllowed } from '../domain/permissions.js';
import { AppError } from '../errors.js';
import type { Principal } from './auth-service.js';

/** How long a domain found verified is trusted without asking the database again. */
const VERIFIED_TTL_MS = 60_000;
const CACHE_MAX = 10_000;

/**
 * The sender rules of the spec (Authentication 6): the key's allowed_domains first, then the domain must
 * be one of the account's and verified. Each failure is a 403 naming the domain.
 *
 * Verification only ever goes one way (a domain is never unverified), so a domain found verified is
 * remembered for a minute, which saves a query on every send; one not verified is always asked again.
 */
export function createSenderCheck(domains: Pick<DomainsRepo, 'findByName'>, now: () => number = Date.now) {
  const verified = new Map<string, number>();
  return async function assertMaySendFrom(principal: Principal, domain: string): Promise<void> {
    assertSenderDomainAllowed(principal.allowedDomains, domain);
    const key = `${principal.accountId}/${domain}`;
    if ((verified.get(key) ?? 0) > now()) return;
    const row = await domains.findByName(principal.accountId, domain);
    if (!row || row.verifiedAt === null) {
      throw new AppError('permission_denied', `The domain ${domain} is not verified: verify it before sending from it`);
    }
    if (verified.size >= CACHE_MAX) verified.clear();
    verified.set(key, now() + VERIFIED_TTL_MS);
  };
}
export type SenderCheck = ReturnType<typeof createSenderCheck>;
