import type { DkimKeysRepo } from '../db/index.js';
import type { DomainsRepo } from '../db/index.js';
import { dkimRecordName, dkimRecordVerified } from '../domain/dns-records.js';
import { assertSenderDomainAllowed } from '../domain/permissions.js';
import { AppError } from '../errors.js';
import type { Principal } from './auth-service.js';

/** How long a domain found verified is trusted without asking the database again. */
const VERIFIED_TTL_MS = 60_000;
const CACHE_MAX = 10_000;

export interface SenderCheckDeps {
  domains: Pick<DomainsRepo, 'findByName'>;
  dkimKeys: Pick<DkimKeysRepo, 'activeSelector'>;
  /**
   * Direct delivery (MAILER_DELIVERY=direct): the domain's DKIM record must also be verified by DNS. A domain
   * verified with `force` (the seeded default domain) has no record its receivers could check: its mail
   * would fail DKIM and DMARC at every receiver and burn the sending address's reputation. A relay signs
   * or rewrites on its own terms, and the catcher keeps mail locally, so there `verified` is enough.
   */
  requireDkimRecord: boolean;
  now?: () => number;
}

/**
 * The sender rules of the spec (Authentication 6): the key's allowed_domains first, then the domain must
 * be one of the account's and verified (and in direct delivery, its DKIM record verified). Each failure is
 * a 403 naming the domain.
 *
 * Verification only ever goes one way (a domain is never unverified), so a domain found verified is
 * remembered for a minute, which saves a query on every send; one not verified is always asked again. A domain
 * can be deleted, though: `forget` drops it from this process's memory at once (the domains service calls it);
 * another process may still take it for the rest of its minute.
 */
export function createSenderCheck(
  deps: SenderCheckDeps,
): SenderCheck & { forget: (accountId: string, domain: string) => void } {
  const now = deps.now ?? Date.now;
  const verified = new Map<string, number>();
  async function assertMaySendFrom(principal: Principal, domain: string): Promise<void> {
    assertSenderDomainAllowed(principal.allowedDomains, domain);
    const key = `${principal.accountId}/${domain}`;
    if ((verified.get(key) ?? 0) > now()) return;
    const row = await deps.domains.findByName(principal.accountId, domain);
    if (!row || row.verifiedAt === null) {
      throw new AppError('permission_denied', `The domain ${domain} is not verified: verify it before sending from it`);
    }
    if (deps.requireDkimRecord) {
      const selector = await deps.dkimKeys.activeSelector(row.id);
      if (selector === undefined || !dkimRecordVerified(row, selector)) {
        const record =
          selector === undefined
            ? 'its DKIM record'
            : `its DKIM record (TXT ${dkimRecordName(row.name, selector)}, as its dns_records list it)`;
        throw new AppError(
          'permission_denied',
          `The DKIM record of ${domain} is not verified: this service delivers directly to recipients' servers, which refuse mail they cannot ` +
            `authenticate, so it sends only from domains whose DKIM record checks out. Publish ${record} and verify the domain again`,
        );
      }
    }
    if (verified.size >= CACHE_MAX) verified.clear();
    verified.set(key, now() + VERIFIED_TTL_MS);
  }
  return Object.assign(assertMaySendFrom, {
    forget: (accountId: string, domain: string) => void verified.delete(`${accountId}/${domain}`),
  });
}
/** Refuses (403) a send from a domain the key or the account may not send from. */
export type SenderCheck = (principal: Principal, domain: string) => Promise<void>;
