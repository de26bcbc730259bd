import type { DomainDnsCheck } from '../services/domain-dns-check.js';

/** The periodic DNS re-check's one side effect: the lookups and what they store (domain-dns-check.ts). */
export function createDomainActivities(deps: { checks: Pick<DomainDnsCheck, 'recheckDue'>; recheckMinutes: number }) {
  return {
    recheckDomains: (): Promise<number> => deps.checks.recheckDue(deps.recheckMinutes),
  };
}
