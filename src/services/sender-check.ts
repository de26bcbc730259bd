import type { DomainsRepo } from '../db/repos/domains-repo.js';
import { assertSenderDomainAllowed } from '../domain/permissions.js';
import { AppError } from '../errors.js';
import type { Principal } from './auth-service.js';

/**
 * The sender rules of the spec (Authentication 6): the key's allowed_domains first, then the domain must
 * be one of the account's and verified. Each failure is a 403 naming the domain.
 */
export function createSenderCheck(domains: Pick<DomainsRepo, 'findByName'>) {
  return async function assertMaySendFrom(principal: Principal, domain: string): Promise<void> {
    assertSenderDomainAllowed(principal.allowedDomains, domain);
    const row = await domains.findByName(principal.accountId, domain);
    if (!row || row.verifiedAt === null) {
      throw new AppError('permission_denied', `The domain ${domain} is not verified: verify it before sending from it`);
    }
  };
}
export type SenderCheck = ReturnType<typeof createSenderCheck>;
