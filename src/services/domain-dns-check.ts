import type { DkimKeysRepo } from '../db/index.js';
import type { DomainRow } from '../domain/entities/domains.js';
import type { DomainsRepo, InboundRoutesRepo } from '../db/index.js';
import { dmarcAt, dmarcNames, NO_DMARC, type DmarcFinding } from '../domain/dmarc.js';
import { matchRecord, type Answer } from '../domain/dns-match.js';
import {
  expectedRecords,
  failingRecords,
  nextStatus,
  type CheckOutcome,
  type ExpectedRecord,
  type PublishSettings,
  type StoredStatuses,
} from '../domain/dns-records.js';
import type { Logger } from '../logger.js';
import type { DnsResolver } from '../net/dns-resolver.js';

export interface DomainDnsCheckDeps {
  domains: Pick<DomainsRepo, 'recordDnsCheck' | 'dueForRecheck'>;
  dkimKeys: Pick<DkimKeysRepo, 'listPublished' | 'promote'>;
  /** The domains of the inbound routes on each domain: their MX records are checked with the rest. */
  inboundRoutes: Pick<InboundRoutesRepo, 'domainsOf'>;
  resolver: DnsResolver;
  publish: PublishSettings;
  now: () => Date;
  logger: Logger;
}

export interface CheckedDomain {
  domain: DomainRow;
  records: ExpectedRecord[];
}

/** Domains re-checked per run of the periodic re-check; the rest wait for the next run (oldest first). */
const RECHECK_BATCH = 200;

/** One lookup per name and type; a resolver failure (not an absent name) is `unknown` for its records. */
async function lookUp(
  records: ExpectedRecord[],
  resolver: DnsResolver,
  logger: Logger,
): Promise<Map<string, CheckOutcome>> {
  const answers = new Map<string, Promise<Answer | undefined>>();
  for (const r of records) {
    const key = `${r.type} ${r.name}`;
    if (answers.has(key)) continue;
    const answer: Promise<Answer> =
      r.type === 'MX'
        ? resolver.resolveMx(r.name).then((values) => ({ type: 'MX', values }))
        : resolver.resolveTxt(r.name).then((values) => ({ type: 'TXT', values }));
    answers.set(
      key,
      answer.catch((err: unknown) => {
        logger.debug({ err, name: r.name, type: r.type }, 'DNS lookup failed: the record keeps its status');
        return undefined;
      }),
    );
  }
  const outcomes = new Map<string, CheckOutcome>();
  for (const r of records) {
    const answer = await answers.get(`${r.type} ${r.name}`)!;
    outcomes.set(r.key, answer === undefined ? 'unknown' : matchRecord(r, answer));
  }
  return outcomes;
}

/**
 * The DMARC policy covering a domain: its own `_dmarc` record, else a parent's (domain/dmarc.ts); undefined
 * when a lookup failed (the last finding stands).
 */
async function lookUpDmarc(domain: string, resolver: DnsResolver, logger: Logger): Promise<DmarcFinding | undefined> {
  const names = dmarcNames(domain);
  for (const [i, name] of names.entries()) {
    let txt: string[];
    try {
      txt = await resolver.resolveTxt(name);
    } catch (err) {
      logger.debug({ err, name }, 'DNS lookup failed: the DMARC finding stays as it was');
      return undefined;
    }
    const found = dmarcAt(name, txt, i > 0);
    if (found) return found;
  }
  return NO_DMARC;
}

/** Tells the owner (through the log) when a verified domain's records start failing, and when they are right again. */
function reportFailing(domain: DomainRow, failing: ExpectedRecord[], logger: Logger): void {
  if (domain.verifiedAt === null) return;
  if (failing.length > 0 && domain.dnsFailingSince === null) {
    logger.warn(
      { domain: domain.name, domainId: domain.id, records: failing.map((r) => `${r.purpose} ${r.type} ${r.name}`) },
      "a verified domain's DNS records are no longer right: its mail may fail SPF/DKIM checks (it keeps sending)",
    );
  } else if (failing.length === 0 && domain.dnsFailingSince !== null) {
    logger.info({ domain: domain.name, domainId: domain.id }, "a domain's DNS records are right again");
  }
}

/**
 * Looking a domain's records up in DNS (through MAILER_DNS_SERVERS) and storing what was found: each
 * record's status, a rotation's new DKIM key promoted once its record is seen, and whether a verified
 * domain's required records are failing. The domain's `verified` is the caller's (verify) decision: a
 * verified domain is never unverified here, sending goes on, and the owner is told instead.
 */
export function createDomainDnsCheck(deps: DomainDnsCheckDeps) {
  async function recordsOf(domain: DomainRow): Promise<ExpectedRecord[]> {
    const [keys, routed] = await Promise.all([
      deps.dkimKeys.listPublished([domain.id]),
      deps.inboundRoutes.domainsOf([domain.id]),
    ]);
    return expectedRecords(
      {
        name: domain.name,
        verificationToken: domain.verificationToken,
        inboundDomains: routed.map((r) => r.domain),
        keys: keys.flatMap((k) =>
          k.status === 'retired' ? [] : [{ id: k.id, selector: k.selector, publicKey: k.publicKey, status: k.status }],
        ),
      },
      deps.publish,
    );
  }

  /** A pending key whose record is verified becomes the active one; answers whether one did. */
  async function promoteVerified(
    domain: DomainRow,
    records: ExpectedRecord[],
    statuses: StoredStatuses,
  ): Promise<boolean> {
    let promoted = false;
    for (const r of records) {
      if (r.purpose !== 'dkim' || r.required || r.dkimKeyId === undefined || statuses[r.key]?.status !== 'verified')
        continue;
      if (await deps.dkimKeys.promote(domain.id, r.dkimKeyId)) {
        promoted = true;
        deps.logger.info(
          { domain: domain.name, record: r.name },
          'the new DKIM key is published: it signs from now on, and the old one is retired',
        );
      }
    }
    return promoted;
  }

  async function check(domain: DomainRow): Promise<CheckedDomain> {
    let records = await recordsOf(domain);
    const [outcomes, dmarc] = await Promise.all([
      lookUp(records, deps.resolver, deps.logger),
      lookUpDmarc(domain.name, deps.resolver, deps.logger),
    ]);
    const statuses: StoredStatuses = {};
    for (const r of records) {
      const previous = domain.dnsStatuses[r.key];
      statuses[r.key] = nextStatus(previous, outcomes.get(r.key) ?? 'unknown');
      const finding = r.purpose === 'dmarc' ? (dmarc ?? previous?.dmarc) : undefined;
      if (finding) statuses[r.key]!.dmarc = finding;
    }
    // Statuses are kept by record name, so the promoted key's status carries over to its new role.
    if (await promoteVerified(domain, records, statuses)) {
      records = await recordsOf(domain);
      // The retired key's record is no longer shown: its status goes with it.
      for (const key of Object.keys(statuses)) if (!records.some((r) => r.key === key)) delete statuses[key];
    }
    const failing = domain.verifiedAt === null ? [] : failingRecords(records, statuses);
    reportFailing(domain, failing, deps.logger);
    const now = deps.now();
    const updated = await deps.domains.recordDnsCheck(domain.id, {
      checkedAt: now,
      statuses,
      failingSince: failing.length > 0 ? (domain.dnsFailingSince ?? now) : null,
    });
    return { domain: updated ?? domain, records };
  }

  return {
    check,
    recordsOf,

    /** Re-checks verified domains last checked more than `intervalMinutes` ago; answers how many. */
    async recheckDue(intervalMinutes: number): Promise<number> {
      const due = await deps.domains.dueForRecheck(
        new Date(deps.now().getTime() - intervalMinutes * 60_000),
        RECHECK_BATCH,
      );
      for (const domain of due) {
        try {
          await check(domain);
        } catch (err) {
          deps.logger.warn({ err, domain: domain.name }, "could not re-check a domain's DNS records");
        }
      }
      return due.length;
    },
  };
}
export type DomainDnsCheck = ReturnType<typeof createDomainDnsCheck>;
