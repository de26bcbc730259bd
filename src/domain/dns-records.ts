import { NO_DMARC, type DmarcFinding } from './dmarc.js';
import { returnPathDomain } from './return-path-domain.js';

/**
 * The DNS records a sender domain's owner publishes (CONTRACT.md, "Delivery, authentication and reports"),
 * and what a check of them concludes. Pure: the lookups are the caller's (services/domain-dns-check.ts).
 */

export type RecordPurpose = 'ownership' | 'spf' | 'dkim' | 'return_path' | 'return_path_spf' | 'dmarc' | 'inbound';
export type RecordStatus = 'verified' | 'pending' | 'failed';

export interface ExpectedRecord {
  type: 'TXT' | 'MX';
  name: string;
  value: string;
  purpose: RecordPurpose;
  /** Counts towards the domain being verified: ownership, SPF and the DKIM record of the active key. */
  required: boolean;
  /** Names the record in the stored statuses: stable while the record is the same. */
  key: string;
  /** DKIM records: the key they publish. */
  dkimKeyId?: string;
}

export interface PublishedKey {
  id: string;
  selector: string;
  /** base64 of the SPKI DER: the record's p=. */
  publicKey: string;
  status: 'active' | 'pending';
}

export interface PublishSettings {
  /** MAILER_HOSTNAME: the return-path MX host, and what SPF authorises unless spfInclude is set. */
  hostname: string;
  /** MAILER_SPF_INCLUDE. */
  spfInclude: string | undefined;
  /** MAILER_RETURN_PATH_DOMAIN: when set, the return path is not the domain's own and has no records here. */
  returnPathDomain: string | undefined;
}

/** The SPF mechanism that authorises the service: `include:<MAILER_SPF_INCLUDE>`, else `a:<MAILER_HOSTNAME>`. */
export function spfMechanism(settings: Pick<PublishSettings, 'hostname' | 'spfInclude'>): string {
  return settings.spfInclude !== undefined ? `include:${settings.spfInclude}` : `a:${settings.hostname}`;
}

/** The MX preference published for the return-path domain (its only MX), and for each domain inbound routes are on. */
const MX_PREFERENCE = 10;

const record = (r: Omit<ExpectedRecord, 'key'>): ExpectedRecord => ({ ...r, key: `${r.purpose}:${r.name}` });

/** The DNS name of a domain's DKIM record for `selector`. */
export const dkimRecordName = (domainName: string, selector: string) => `${selector}._domainkey.${domainName}`;

/** The last DNS check found the DKIM record of `selector` (the domain's signing key) published as listed. */
export function dkimRecordVerified(domain: { name: string; dnsStatuses: StoredStatuses }, selector: string): boolean {
  return domain.dnsStatuses[`dkim:${dkimRecordName(domain.name, selector)}`]?.status === 'verified';
}

/**
 * Every record to publish for a domain, in the order shown to its owner. `inboundDomains`: the domains its inbound
 * routes are on (itself, subdomains of it), each of which points its MX at the service's inbound listener; they
 * are checked like the others, and none is needed for the domain to be verified (it sends without them).
 */
export function expectedRecords(
  domain: { name: string; verificationToken: string; keys: PublishedKey[]; inboundDomains: readonly string[] },
  settings: PublishSettings,
): ExpectedRecord[] {
  const mechanism = spfMechanism(settings);
  const records: ExpectedRecord[] = [
    record({
      type: 'TXT',
      name: `_mailer.${domain.name}`,
      value: `mailer-verification=${domain.verificationToken}`,
      purpose: 'ownership',
      required: true,
    }),
    record({ type: 'TXT', name: domain.name, value: `v=spf1 ${mechanism} ~all`, purpose: 'spf', required: true }),
  ];
  // The active key first: it is the one that signs.
  const keys = [...domain.keys].sort((a, b) =>
    a.status === b.status ? a.selector.localeCompare(b.selector) : a.status === 'active' ? -1 : 1,
  );
  for (const key of keys) {
    records.push(
      record({
        type: 'TXT',
        name: dkimRecordName(domain.name, key.selector),
        value: `v=DKIM1; k=rsa; p=${key.publicKey}`,
        purpose: 'dkim',
        required: key.status === 'active',
        dkimKeyId: key.id,
      }),
    );
  }
  if (settings.returnPathDomain === undefined) {
    const rp = returnPathDomain(domain.name, undefined);
    records.push(
      record({
        type: 'MX',
        name: rp,
        value: `${MX_PREFERENCE} ${settings.hostname}`,
        purpose: 'return_path',
        required: false,
      }),
      // -all: nothing but the service sends as the return-path domain.
      record({ type: 'TXT', name: rp, value: `v=spf1 ${mechanism} -all`, purpose: 'return_path_spf', required: false }),
    );
  }
  records.push(
    record({
      type: 'TXT',
      name: `_dmarc.${domain.name}`,
      value: 'v=DMARC1; p=none;',
      purpose: 'dmarc',
      required: false,
    }),
  );
  for (const name of [...new Set(domain.inboundDomains)].sort())
    records.push(
      record({ type: 'MX', name, value: `${MX_PREFERENCE} ${settings.hostname}`, purpose: 'inbound', required: false }),
    );
  return records;
}

/** What one lookup of a record found: it, something else, nothing, or (the resolver failed) nothing known. */
export type CheckOutcome = 'verified' | 'failed' | 'absent' | 'unknown';

/** A record's stored state: its status, and whether it was ever found right (so that losing it is a failure). */
export interface StoredStatus {
  status: RecordStatus;
  everVerified: boolean;
  /** The DMARC record's only: the policy found covering the domain, at its own name or a parent's (dmarc.ts). */
  dmarc?: DmarcFinding;
}
export type StoredStatuses = Record<string, StoredStatus>;

/**
 * The status after a lookup: found right is verified; found wrong is failed; not found is pending, unless it
 * was verified before (then it is failed: a record that disappeared); a lookup that could not be made leaves
 * the status as it was.
 */
export function nextStatus(previous: StoredStatus | undefined, outcome: CheckOutcome): StoredStatus {
  const everVerified = previous?.everVerified ?? false;
  switch (outcome) {
    case 'verified':
      return { status: 'verified', everVerified: true };
    case 'failed':
      return { status: 'failed', everVerified };
    case 'absent':
      return everVerified ? { status: 'failed', everVerified } : { status: 'pending', everVerified };
    case 'unknown':
      return previous ?? { status: 'pending', everVerified: false };
  }
}

export const statusOf = (statuses: StoredStatuses, r: ExpectedRecord): RecordStatus =>
  statuses[r.key]?.status ?? 'pending';

/** The DMARC policy the last check found covering the domain; none before the first check. */
export function dmarcOf(statuses: StoredStatuses, records: ExpectedRecord[]): DmarcFinding {
  const dmarc = records.find((r) => r.purpose === 'dmarc');
  return (dmarc && statuses[dmarc.key]?.dmarc) ?? NO_DMARC;
}

/** The domain checks out (may be marked verified): ownership, SPF and the active key's DKIM record are verified. */
export function checksOut(records: ExpectedRecord[], statuses: StoredStatuses): boolean {
  const required = records.filter((r) => r.required);
  return required.some((r) => r.purpose === 'dkim') && required.every((r) => statusOf(statuses, r) === 'verified');
}

/**
 * The required records of a domain that are failing: found wrong, or gone after being verified. A record
 * never published (pending) is not failing: a domain an operator verified with `force` is not flagged for
 * records its owner never published.
 */
export function failingRecords(records: ExpectedRecord[], statuses: StoredStatuses): ExpectedRecord[] {
  return records.filter((r) => r.required && statusOf(statuses, r) === 'failed');
}

/** A dated DKIM selector (`m20261124`), with `-2`, `-3`... when the domain already has that one. */
export function dkimSelector(now: Date, taken: readonly string[]): string {
  const base = `m${now.toISOString().slice(0, 10).replace(/-/g, '')}`;
  if (!taken.includes(base)) return base;
  for (let n = 2; ; n++) if (!taken.includes(`${base}-${n}`)) return `${base}-${n}`;
}
