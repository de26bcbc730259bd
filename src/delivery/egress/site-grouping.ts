import { getDomain } from 'tldts';
import type { EgressRules, SiteRule } from '../../domain/entities/egress.js';

/** An MX host name as compared: lower case, without the root's trailing dot. */
const normalHost = (host: string): string => host.trim().toLowerCase().replace(/\.$/, '');

/**
 * Whether an MX host name matches a site's `mx` glob: an exact name, or `*.` followed by a suffix, the `*`
 * standing for one or more labels (`*.google.com` matches `gmail-smtp-in.l.google.com`, not `google.com`).
 */
export function mxGlobMatches(glob: string, host: string): boolean {
  const g = normalHost(glob);
  const h = normalHost(host);
  if (g.startsWith('*.')) {
    const suffix = g.slice(1);
    return h.length > suffix.length && h.endsWith(suffix);
  }
  return g === h;
}

/** A glob the rules file accepts: a host name, or `*.` and a host name. */
export const MX_GLOB = /^(\*\.)?[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*\.?$/i;

/** The named site whose `mx` globs match one of `mxHosts` (the first site in file order that matches any), or undefined. */
export function namedSiteOf(sites: readonly SiteRule[], mxHosts: readonly string[]): SiteRule | undefined {
  return sites.find((site) => site.mx.some((glob) => mxHosts.some((host) => mxGlobMatches(glob, host))));
}

/**
 * The site a domain with MX hosts `mxHosts` (preference order) belongs to: the first [site.*] whose `mx`
 * matches any of them; else, by the file's site_grouping, the most preferred host's registrable domain
 * (tldts: mx1.mail.protection.outlook.com -> outlook.com; the host itself when it has none, an address or a
 * single label) or the host name. A domain without MX (its own address is the host) is its host's site.
 */
export function siteOf(rules: Pick<EgressRules, 'sites' | 'siteGrouping'>, mxHosts: readonly string[]): string {
  const named = namedSiteOf(rules.sites, mxHosts);
  if (named) return named.name;
  const first = normalHost(mxHosts[0] ?? '');
  if (first === '') return 'unknown';
  if (rules.siteGrouping === 'mx-host') return first;
  return getDomain(first, { allowPrivateDomains: false }) ?? first;
}
