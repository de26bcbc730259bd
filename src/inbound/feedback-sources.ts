import net from 'node:net';
import { dkimVerify } from 'mailauth';
import { parseCidr } from '../cidr.js';
import { asciiDomain } from '../domain/domain-name.js';
import type { DnsResolver } from '../net/dns-resolver.js';

/**
 * Which complaint reports may move an account's health (MAILER_FBL_SOURCES): those from the feedback loops an
 * operator trusts, named by the address they connect from (`203.0.113.7`, `2001:db8::/32`) or by the domain
 * that DKIM-signs their reports (`feedback.yahoo.com`, any of its subdomains too). A complaint from anyone
 * else, a recipient mailing a forged ARF to the listener, say, is still recorded as an event of that
 * recipient's own copy, but is not counted against the account: otherwise one recipient could move an
 * account to review and then to paused.
 */
export interface FeedbackSources {
  /** Whether `raw`, received from `remoteAddress`, comes from a trusted feedback loop. */
  trusted(raw: Buffer, remoteAddress: string | undefined): Promise<boolean>;
  /** Whether any source is configured (with none, no complaint moves health: the README says so). */
  readonly configured: boolean;
}

/** The entries of MAILER_FBL_SOURCES, read once: addresses and networks, and DKIM domains. */
export function parseFeedbackSources(
  entries: string[],
): { addresses: net.BlockList; domains: string[] } | { error: string } {
  const addresses = new net.BlockList();
  const domains: string[] = [];
  for (const entry of entries) {
    const cidr = parseCidr(entry);
    if (cidr) {
      addresses.addSubnet(cidr.address, cidr.prefix, cidr.family);
      continue;
    }
    const [host, bits, extra] = entry.split('/');
    const family = net.isIP(host ?? '');
    if (family !== 0 && extra === undefined)
      return { error: `"${entry}": the prefix length must be 0-${family === 4 ? 32 : 128}` };
    const domain = bits === undefined ? asciiDomain(entry) : undefined;
    if (domain === undefined) return { error: `"${entry}" is not an address, a network or a domain` };
    domains.push(domain);
  }
  return { addresses, domains };
}

const isWithin = (domain: string, listed: string) => domain === listed || domain.endsWith(`.${listed}`);

export function createFeedbackSources(entries: string[], resolver: DnsResolver): FeedbackSources {
  const parsed = parseFeedbackSources(entries);
  if ('error' in parsed) throw new Error(`MAILER_FBL_SOURCES: ${parsed.error}`);
  const { addresses, domains } = parsed;
  // mailauth's resolver: TXT records as lists of character strings, as node's resolveTxt answers them.
  const lookup = async (name: string, rrtype: string) =>
    rrtype === 'TXT' ? (await resolver.resolveTxt(name)).map((t) => [t]) : [];

  return {
    configured: entries.length > 0,
    async trusted(raw, remoteAddress) {
      if (remoteAddress !== undefined) {
        const plain = remoteAddress.replace(/^::ffff:(?=\d+\.)/i, '');
        if (net.isIP(plain) !== 0 && addresses.check(plain, net.isIP(plain) === 4 ? 'ipv4' : 'ipv6')) return true;
      }
      if (domains.length === 0) return false;
      // Only a signature that verifies counts: a From or a d= anyone can write proves nothing.
      const result = await dkimVerify(raw, { resolver: lookup as never }).catch(() => undefined);
      return (result?.results ?? []).some(
        (r) => r.status.result === 'pass' && domains.some((d) => isWithin(r.signingDomain.toLowerCase(), d)),
      );
    },
  };
}
