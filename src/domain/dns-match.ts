import type { CheckOutcome, ExpectedRecord } from './dns-records.js';
import { tags } from './tag-list.js';

/**
 * Whether what DNS answered for a record's name is the record (domain/dns-records.ts): each purpose has
 * its own rule, lenient where receivers are (case, whitespace, qualifiers) and strict where they are
 * (one SPF record per name, the exact DKIM key).
 */

export interface MxAnswer {
  exchange: string;
  priority: number;
}

/** What a lookup of the record's name and type answered: TXT strings (chunks joined) or MX records. */
export type Answer = { type: 'TXT'; values: string[] } | { type: 'MX'; values: MxAnswer[] };

export function matchRecord(expected: ExpectedRecord, answer: Answer): Exclude<CheckOutcome, 'unknown'> {
  if (answer.values.length === 0) return 'absent';
  if (answer.type === 'MX') return matchMx(expected, answer.values);
  const txt = answer.values.map((v) => v.trim());
  switch (expected.purpose) {
    case 'ownership':
      return matchOwnership(expected.value, txt);
    case 'spf':
    case 'return_path_spf':
      return matchSpf(spfTerms(expected.value)[1] ?? '', txt);
    case 'dkim':
      return matchDkim(tags(expected.value).get('p') ?? '', txt);
    case 'dmarc':
      return matchDmarc(txt);
    default:
      return 'failed';
  }
}

/** Our token among the TXT records; another verification token there means someone else's. */
function matchOwnership(value: string, txt: string[]): Exclude<CheckOutcome, 'unknown'> {
  if (txt.includes(value)) return 'verified';
  const prefix = value.slice(0, value.indexOf('=') + 1);
  return txt.some((t) => t.startsWith(prefix)) ? 'failed' : 'absent';
}

const spfTerms = (record: string) => record.trim().split(/\s+/);
const normalizeTerm = (term: string) => term.toLowerCase().replace(/^\+/, '').replace(/\.$/, '');

/**
 * RFC 7208 3.2: a name with two SPF records makes every check a permerror, so that is a failure even when
 * one of them has our mechanism. Our mechanism counts as a term of its own, with or without `+`.
 */
function matchSpf(mechanism: string, txt: string[]): Exclude<CheckOutcome, 'unknown'> {
  const spf = txt.filter((t) => /^v=spf1(\s|$)/i.test(t));
  if (spf.length === 0) return 'absent';
  if (spf.length > 1) return 'failed';
  const wanted = normalizeTerm(mechanism);
  return spfTerms(spf[0]!)
    .slice(1)
    .some((term) => normalizeTerm(term) === wanted)
    ? 'verified'
    : 'failed';
}

/** RFC 7489 6.6.3: more than one DMARC record at the name is as good as none, so that is a failure. */
function matchDmarc(txt: string[]): Exclude<CheckOutcome, 'unknown'> {
  const dmarc = txt.filter((t) => /^v\s*=\s*DMARC1(\s*;|\s*$)/i.test(t));
  if (dmarc.length === 0) return 'absent';
  return dmarc.length === 1 ? 'verified' : 'failed';
}

/** The published key is ours: its p= equals ours once whitespace (folding) is removed, and its k= is RSA. */
function matchDkim(publicKey: string, txt: string[]): Exclude<CheckOutcome, 'unknown'> {
  const ours = publicKey.replace(/\s+/g, '');
  const found = txt.some((t) => {
    const parsed = tags(t);
    const k = (parsed.get('k') ?? 'rsa').toLowerCase();
    return k === 'rsa' && (parsed.get('p') ?? '').replace(/\s+/g, '') === ours;
  });
  return found ? 'verified' : 'failed';
}

/** An exchange that is the service's host (case and a trailing dot aside). */
function matchMx(expected: ExpectedRecord, mx: MxAnswer[]): Exclude<CheckOutcome, 'unknown'> {
  const host = (expected.value.split(/\s+/)[1] ?? '').toLowerCase().replace(/\.$/, '');
  return mx.some((r) => r.exchange.toLowerCase().replace(/\.$/, '') === host) ? 'verified' : 'failed';
}
