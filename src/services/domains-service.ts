import type { AccountsRepo } from '../db/repos/accounts-repo.js';
import type { DomainRow, DomainsRepo } from '../db/repos/domains-repo.js';
import { DAILY_QUOTA } from '../domain/limits.js';
import { invalid, notFound } from '../errors.js';
import { newId } from '../ids.js';
import { generateToken } from './secrets.js';

export interface DnsRecord {
  type: string;
  name: string;
  value: string;
}

export const DOMAIN_NAME = /^(?=.{1,253}$)((?!-)[a-z0-9-]{1,63}(?<!-)\.)+[a-z][a-z0-9-]{0,62}$/;

/** The records a domain owner publishes; verification checks the TXT record. */
export function dnsRecords(domain: DomainRow): DnsRecord[] {
  return [
    { type: 'TXT', name: `_mailer.${domain.name}`, value: `mailer-verification=${domain.verificationToken}` },
    { type: 'TXT', name: domain.name, value: 'v=spf1 a mx ~all' },
  ];
}

export interface DomainsDeps {
  domains: DomainsRepo;
  accounts: Pick<AccountsRepo, 'get' | 'raiseQuotaFrom'>;
  /** DNS TXT lookup; an unresolvable name answers []. */
  resolveTxt: (name: string) => Promise<string[][]>;
}

export function createDomainsService(deps: DomainsDeps) {
  async function mustGet(id: string): Promise<DomainRow> {
    const domain = await deps.domains.get(id);
    if (!domain) throw notFound('domain', id);
    return domain;
  }

  return {
    async create(accountId: string, name: string): Promise<DomainRow> {
      if (!(await deps.accounts.get(accountId))) throw notFound('account', accountId);
      const normalized = name.trim().toLowerCase().replace(/\.$/, '');
      if (!DOMAIN_NAME.test(normalized)) throw invalid(`name: "${name}" is not a valid domain name`);
      const created = await deps.domains.create({ id: newId('domain'), accountId, name: normalized, verificationToken: generateToken(16) });
      if (!created) throw invalid(`name: the domain ${normalized} is already added to this account`);
      return created;
    },

    async list(accountId: string): Promise<DomainRow[]> {
      if (!(await deps.accounts.get(accountId))) throw notFound('account', accountId);
      return deps.domains.listByAccount(accountId);
    },

    /** Verified when the TXT record checks out, or at once with `force` (operator override). */
    async verify(id: string, force: boolean): Promise<DomainRow> {
      const domain = await mustGet(id);
      if (domain.verifiedAt !== null) return domain;
      if (!force) {
        const expected = dnsRecords(domain)[0]!;
        const found = (await deps.resolveTxt(expected.name)).map((chunks) => chunks.join(''));
        if (!found.includes(expected.value)) return domain;
      }
      const marked = await deps.domains.markVerified(id);
      if (!marked) throw notFound('domain', id);
      // The spec: the quota rises automatically after domain verification (an operator's own quota is kept).
      if (marked.first) await deps.accounts.raiseQuotaFrom(domain.accountId, DAILY_QUOTA.newAccount, DAILY_QUOTA.verifiedAccount);
      return marked.domain;
    },

    async updateTracking(id: string, patch: { openTracking?: boolean; clickTracking?: boolean }): Promise<DomainRow> {
      const updated = await deps.domains.updateTracking(id, patch);
      if (!updated) throw notFound('domain', id);
      return updated;
    },
  };
}
export type DomainsService = ReturnType<typeof createDomainsService>;
