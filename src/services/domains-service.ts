import type { AccountsRepo } from '../db/index.js';
import type { DkimKeysRepo } from '../db/index.js';
import type { DomainRow } from '../domain/entities/domains.js';
import type { DomainsRepo, InboundRoutesRepo } from '../db/index.js';
import type { DmarcFinding } from '../domain/dmarc.js';
import {
  checksOut,
  dmarcOf,
  expectedRecords,
  statusOf,
  type ExpectedRecord,
  type PublishSettings,
  type RecordPurpose,
  type RecordStatus,
} from '../domain/dns-records.js';
import { DAILY_QUOTA } from '../domain/limits.js';
import { toPage } from '../domain/pagination.js';
import { asciiDomain } from '../domain/domain-name.js';
import { zoneValue } from '../domain/zone-value.js';
import { AppError, invalid, notFound } from '../errors.js';
import { newId } from '../ids.js';
import type { DkimProvisioning } from './dkim-provisioning.js';
import type { DomainDnsCheck } from './domain-dns-check.js';
import { generateToken } from './secrets.js';

/**
 * The most domains an account may have, whoever adds them: each costs a DKIM key pair to make and a DNS check
 * every re-check period, and accounts add their own now.
 */
export const DOMAINS_MAX = 1000;

/** A record to publish, with its status from the last DNS check. */
export interface DnsRecord {
  type: string;
  name: string;
  value: string;
  /** The value as a zone file and DNS providers take it: a TXT value as quoted strings of 255 (domain/zone-value.ts). */
  zoneValue: string;
  purpose: RecordPurpose;
  status: RecordStatus;
}

/** A domain with every record its owner publishes. */
export interface DomainView extends DomainRow {
  dnsRecords: DnsRecord[];
  /** The DMARC policy the last DNS check found covering the domain. */
  dmarc: DmarcFinding;
}

export interface DomainsDeps {
  domains: Pick<DomainsRepo, 'create' | 'get' | 'page' | 'markVerified' | 'updateTracking' | 'delete'>;
  dkimKeys: Pick<DkimKeysRepo, 'listPublished'>;
  /** The domains of each domain's inbound routes, whose MX records it lists. */
  inboundRoutes: Pick<InboundRoutesRepo, 'domainsOf'>;
  accounts: Pick<AccountsRepo, 'get' | 'raiseQuotaFrom'>;
  dkim: Pick<DkimProvisioning, 'addKey'>;
  checks: Pick<DomainDnsCheck, 'check'>;
  publish: PublishSettings;
  /** Told of each deleted domain: the send path's memory of verified domains forgets it (sender-check.ts). */
  onDeleted?: (accountId: string, name: string) => void;
}

const withStatuses = (domain: DomainRow, records: ExpectedRecord[]): DomainView => ({
  ...domain,
  dnsRecords: records.map((r) => ({
    type: r.type,
    name: r.name,
    value: r.value,
    zoneValue: zoneValue(r.type, r.value),
    purpose: r.purpose,
    status: statusOf(domain.dnsStatuses, r),
  })),
  dmarc: dmarcOf(domain.dnsStatuses, records),
});

/**
 * An account's sender domains, for both APIs: a key's calls name its own account (`owner`), and another
 * account's domain is a 404 worded as an unknown one's, decided by the query that reads or changes the row; the
 * operator's calls pass no owner and reach any account's.
 */
export function createDomainsService(deps: DomainsDeps) {
  async function mustGet(owner: string | undefined, id: string): Promise<DomainRow> {
    const domain = await deps.domains.get(id, owner);
    if (!domain) throw notFound('domain', id);
    return domain;
  }

  /** Domains with their records: one query for the keys of all of them, one for their routes' domains. */
  async function views(domains: DomainRow[]): Promise<DomainView[]> {
    const ids = domains.map((d) => d.id);
    const [keys, routed] = await Promise.all([deps.dkimKeys.listPublished(ids), deps.inboundRoutes.domainsOf(ids)]);
    return domains.map((d) =>
      withStatuses(
        d,
        expectedRecords(
          {
            name: d.name,
            verificationToken: d.verificationToken,
            inboundDomains: routed.flatMap((r) => (r.domainId === d.id ? [r.domain] : [])),
            keys: keys.flatMap((k) =>
              k.domainId === d.id && k.status !== 'retired'
                ? [{ id: k.id, selector: k.selector, publicKey: k.publicKey, status: k.status }]
                : [],
            ),
          },
          deps.publish,
        ),
      ),
    );
  }
  const view = async (domain: DomainRow) => (await views([domain]))[0]!;

  async function markVerified(domain: DomainRow): Promise<DomainRow> {
    const marked = await deps.domains.markVerified(domain.id);
    if (!marked) throw notFound('domain', domain.id);
    // The spec: the quota rises automatically after domain verification (an operator's own quota is kept).
    if (marked.first)
      await deps.accounts.raiseQuotaFrom(domain.accountId, DAILY_QUOTA.newAccount, DAILY_QUOTA.verifiedAccount);
    return marked.domain;
  }

  return {
    /** A new domain with its DKIM key (RSA-2048; made before the answer, so its record is among dns_records). */
    async create(accountId: string, name: string): Promise<DomainView> {
      if (!(await deps.accounts.get(accountId))) throw notFound('account', accountId);
      const normalized = asciiDomain(name);
      if (normalized === undefined) throw invalid(`name: "${name}" is not a valid domain name`);
      const created = await deps.domains.create(
        { id: newId('domain'), accountId, name: normalized, verificationToken: generateToken(16) },
        DOMAINS_MAX,
      );
      if (created === 'exists') throw invalid(`name: the domain ${normalized} is already added to this account`);
      if (created === 'full')
        throw invalid(`the account has ${DOMAINS_MAX} domains, the most it may have: delete one first`);
      try {
        await deps.dkim.addKey(created.id, 'active');
      } catch (err) {
        // Keys are being made for too many domains at once (a 429 to retry): take the domain back, so the retry
        // adds it rather than finding it added. Any other failure leaves it: the start-time backfill makes its key.
        if (err instanceof AppError && err.kind === 'rate_limited') await deps.domains.delete(accountId, created.id);
        throw err;
      }
      return view(created);
    },

    /** One page of the account's domains, oldest first, with how many it has. */
    async list(
      accountId: string,
      q: { page: number; pageSize: number },
    ): Promise<{ rows: DomainView[]; total: number }> {
      const { limit, offset } = toPage(q.page, q.pageSize, 'page_size');
      if (!(await deps.accounts.get(accountId))) throw notFound('account', accountId);
      const { rows, total } = await deps.domains.page(accountId, limit, offset);
      return { rows: await views(rows), total };
    },

    async get(owner: string | undefined, id: string): Promise<DomainView> {
      return view(await mustGet(owner, id));
    },

    /**
     * Deletes the domain with its DKIM keys and inbound routes, and cancels the account's scheduled emails
     * still waiting to be sent from it (domains-repo.ts delete); emails already accepted stay.
     */
    async delete(owner: string | undefined, id: string): Promise<{ message: string }> {
      const deleted = await deps.domains.delete(owner, id);
      if (!deleted) throw notFound('domain', id);
      deps.onDeleted?.(deleted.accountId, deleted.name);
      const also = [
        deleted.inboundRoutes > 0 ? `${deleted.inboundRoutes} inbound route(s) deleted` : '',
        deleted.cancelledScheduled > 0 ? `${deleted.cancelledScheduled} scheduled email(s) from it cancelled` : '',
      ].filter((s) => s !== '');
      return { message: `domain ${id} (${deleted.name}) deleted${also.length > 0 ? `; ${also.join(', ')}` : ''}` };
    },

    /**
     * Looks every record up in DNS and stores what was found; the domain becomes verified when ownership,
     * SPF and the active DKIM key check out. `force` (operator override) verifies at once without a lookup.
     * A verified domain stays verified whatever a later check finds.
     */
    async verify(owner: string | undefined, id: string, force: boolean): Promise<DomainView> {
      let domain = await mustGet(owner, id);
      if (force) return view(domain.verifiedAt === null ? await markVerified(domain) : domain);
      const checked = await deps.checks.check(domain);
      domain = checked.domain;
      if (domain.verifiedAt === null && checksOut(checked.records, domain.dnsStatuses))
        domain = await markVerified(domain);
      return withStatuses(domain, checked.records);
    },

    /**
     * Starts a DKIM key rotation: a new key under a new selector, published alongside the active one. It
     * signs once a check finds its record (verify, or the periodic re-check); the old key signs until then.
     * One rotation at a time: a second while one is pending is a conflict (409).
     */
    async rotateDkim(owner: string | undefined, id: string): Promise<DomainView> {
      const domain = await mustGet(owner, id);
      const pendingConflict = () =>
        new AppError(
          'conflict',
          `the domain ${domain.name} already has a new DKIM key waiting for its DNS record: publish it and verify the domain first`,
        );
      if ((await deps.dkimKeys.listPublished([domain.id])).some((k) => k.status === 'pending')) throw pendingConflict();
      if (!(await deps.dkim.addKey(domain.id, 'pending'))) throw pendingConflict();
      return view(domain);
    },

    async updateTracking(
      owner: string | undefined,
      id: string,
      patch: { openTracking?: boolean; clickTracking?: boolean },
    ): Promise<DomainView> {
      const updated = await deps.domains.updateTracking(owner, id, patch);
      if (!updated) throw notFound('domain', id);
      return view(updated);
    },
  };
}
export type DomainsService = ReturnType<typeof createDomainsService>;
