import net from 'node:net';
import { isPrivateAddress } from '../../../net/private-address.js';
import type { DnsResolver, MxRecord } from '../../../net/dns-resolver.js';
import type { SmtpFailure } from '../smtp-outcome.js';
import { dnsFailure, noMailHost, nullMx, privateTarget, unroutable } from './route-failures.js';

/** One address to try: `exchange` is the MX host name (TLS SNI, and the `mx` of an accepted recipient). */
export interface MxTarget {
  exchange: string;
  address: string;
}

/**
 * Where a domain's mail goes: the addresses to try in order, and why others were left out (they count as
 * unreachable hosts), or the failure that settles the domain before any connection.
 */
export type MxRoute = { ok: true; targets: MxTarget[]; skipped: SmtpFailure[] } | { ok: false; failure: SmtpFailure };

export interface RouteOptions {
  resolver: DnsResolver;
  /** Connect to loopback and private addresses too (tests and closed networks). */
  allowPrivate: boolean;
  /** [0, 1): the order among MX records of equal preference. */
  random?: () => number;
}

/** As Postfix's smtp_mx_address_limit: a domain with many dead hosts costs a bounded number of time-outs. */
export const MAX_TARGETS = 5;

/** RFC 7505: the exchange `.` (Node's resolver gives the root as ''). */
export const isNullMx = (record: MxRecord): boolean => ['', '.'].includes(record.exchange.trim());

const hostName = (exchange: string): string => exchange.trim().replace(/\.$/, '').toLowerCase();

/**
 * MX host names by preference, lowest first (RFC 5321 5.1), shuffled among equal preference so that
 * senders spread over a domain's equal hosts; each name once.
 */
export function orderMx(records: MxRecord[], random: () => number = Math.random): string[] {
  const byPreference = new Map<number, string[]>();
  for (const record of records) {
    const names = byPreference.get(record.priority) ?? [];
    names.push(hostName(record.exchange));
    byPreference.set(record.priority, names);
  }
  const ordered = [...byPreference.entries()].sort(([a], [b]) => a - b).flatMap(([, names]) => shuffle(names, random));
  return [...new Set(ordered)];
}

function shuffle<T>(items: T[], random: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

/** The mail hosts of a domain: its MX hosts in order, or (no MX at all) the domain itself, RFC 5321 5.1. */
async function mailHosts(
  domain: string,
  options: RouteOptions,
): Promise<{ hosts: string[]; implicit: boolean } | SmtpFailure> {
  let records: MxRecord[];
  try {
    records = await options.resolver.resolveMx(domain);
  } catch (err) {
    return dnsFailure(domain, 'MX', err);
  }
  if (records.length === 0) return { hosts: [domain], implicit: true };
  // A null MX among real ones breaks RFC 7505 4.1; like mx-connect, deliver to the real ones then.
  const usable = records.filter((r) => !isNullMx(r));
  if (usable.length === 0) return nullMx(domain);
  return { hosts: orderMx(usable, options.random), implicit: false };
}

/** A host's IPv4 then IPv6 addresses, through the configured resolver (never the system's). */
async function addressesOf(host: string, resolver: DnsResolver): Promise<string[] | SmtpFailure> {
  if (net.isIP(host)) return [host];
  const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
  const addresses = [v4, v6].flatMap((r) => (r.status === 'fulfilled' ? r.value : []));
  const failed = [v4, v6].find((r): r is PromiseRejectedResult => r.status === 'rejected');
  // One family answering is enough to try; only a host we know nothing about is a DNS failure.
  if (addresses.length === 0 && failed) return dnsFailure(host, v4.status === 'rejected' ? 'A' : 'AAAA', failed.reason);
  return addresses;
}

/** Resolves where `domain`'s mail goes (lower-case ASCII domain). */
export async function resolveMxRoute(domain: string, options: RouteOptions): Promise<MxRoute> {
  const mail = await mailHosts(domain, options);
  if ('kind' in mail) return { ok: false, failure: mail };
  const lookups = await Promise.all(mail.hosts.map((host) => addressesOf(host, options.resolver)));
  const targets: MxTarget[] = [];
  const skipped: SmtpFailure[] = [];
  const seen = new Set<string>();
  mail.hosts.forEach((exchange, i) => {
    const found = lookups[i] as string[] | SmtpFailure;
    if (!Array.isArray(found)) {
      skipped.push(found);
      return;
    }
    // Several MX names often share addresses: one attempt per address is enough.
    for (const address of found.filter((a) => !seen.has(a))) {
      seen.add(address);
      if (!options.allowPrivate && isPrivateAddress(address)) skipped.push(privateTarget(exchange, address));
      else targets.push({ exchange, address });
    }
  });
  if (targets.length > 0) return { ok: true, targets: targets.slice(0, MAX_TARGETS), skipped };
  if (skipped.length > 0) return { ok: false, failure: skipped[skipped.length - 1] as SmtpFailure };
  return { ok: false, failure: mail.implicit ? noMailHost(domain) : unroutable(domain, mail.hosts) };
}
