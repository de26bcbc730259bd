import { tags } from './tag-list.js';

/**
 * Whether a DMARC policy covers a sender domain, and which (CONTRACT.md issue 25, "compliance at a glance";
 * Gmail and Yahoo require bulk senders to publish one). Pure: the lookups are services/domain-dns-check.ts's.
 *
 * A receiver looks for `_dmarc.<domain>`, and when there is none, for the policy of a parent (RFC 7489's
 * organizational domain; DMARCbis walks the tree the same way). Without a public suffix list the walk stops at
 * two labels: a public suffix publishes no DMARC record, so looking at `_dmarc.co.uk` finds nothing and costs one
 * lookup. A parent's record covers the domain by its `sp=` (subdomain policy), else its `p=`.
 */

export const DMARC_POLICIES = ['none', 'quarantine', 'reject'] as const;
export type DmarcPolicy = (typeof DMARC_POLICIES)[number];

/** What the last DNS check found. */
export interface DmarcFinding {
  published: boolean;
  /** The policy in force for the domain; null when none is published. */
  policy: DmarcPolicy | null;
  /** Where the record was found (`_dmarc.<domain>` or a parent's); null when none is published. */
  recordName: string | null;
}

export const NO_DMARC: DmarcFinding = { published: false, policy: null, recordName: null };

const isDmarc = (txt: string) => /^v\s*=\s*DMARC1(\s*;|\s*$)/i.test(txt.trim());

/** The names to look at, in order: the domain's own, then each parent's down to two labels. */
export function dmarcNames(domain: string): string[] {
  const labels = domain.replace(/\.$/, '').split('.');
  const names: string[] = [];
  for (let i = 0; labels.length - i >= 2; i++) names.push(`_dmarc.${labels.slice(i).join('.')}`);
  return names;
}

/**
 * What the TXT strings at one of dmarcNames(domain) say: undefined when they hold no DMARC record (look further
 * up), else the finding. More than one DMARC record, or one without a valid policy, is as good as none
 * (RFC 7489 6.6.3): not published, and the walk stops there as a receiver's does.
 */
export function dmarcAt(name: string, txt: string[], inherited: boolean): DmarcFinding | undefined {
  const records = txt.filter(isDmarc);
  if (records.length === 0) return undefined;
  if (records.length > 1) return NO_DMARC;
  const t = tags(records[0]!);
  const given = ((inherited ? t.get('sp') : undefined) ?? t.get('p') ?? '').toLowerCase();
  const policy = DMARC_POLICIES.find((p) => p === given);
  return policy === undefined ? NO_DMARC : { published: true, policy, recordName: name };
}
