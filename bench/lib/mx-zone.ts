import { startDnsServer, type DnsServer } from '../../test/helpers/dns-server.js';
import { onCleanup } from './lifecycle.js';

/**
 * The destination domains of the deliverability figure and their DNS: dest0.test ... dest9.test, each with
 * one MX host (`10 mx.destN.test`) at its own loopback address (127.0.0.2 ... 127.0.0.11), where the sink
 * listens at its own port (MAILER_MX_PORT). The DNS server is the tests' (test/helpers/dns-server.ts, a
 * real one on UDP and TCP), in the bench process.
 */
export interface Destination {
  domain: string;
  mxHost: string;
  address: string;
}

export const DESTINATIONS: Destination[] = Array.from({ length: 10 }, (_, n) => ({
  domain: `dest${n}.test`,
  mxHost: `mx.dest${n}.test`,
  address: `127.0.0.${2 + n}`,
}));

/** The i-th recipient of a load: recipients cycle over the destination domains. */
export const recipient = (i: number) => `user${i}@${DESTINATIONS[i % DESTINATIONS.length]!.domain}`;

/** A DNS server answering for the destinations; stopped by cleanup (or by the caller, earlier). */
export async function startMxZone(): Promise<DnsServer & { stop(): Promise<void> }> {
  const dns = await startDnsServer();
  const stop = onCleanup('stop the DNS server', () => dns.close());
  for (const d of DESTINATIONS) {
    dns.set(d.domain, 'MX', [{ exchange: d.mxHost, priority: 10 }]);
    dns.set(d.mxHost, 'A', [d.address]);
  }
  return Object.assign(dns, { stop });
}

/** Questions the service asked about the destinations, by type: shows whether direct delivery looked them up. */
export function destinationQueries(dns: DnsServer): Record<string, number> {
  const byType: Record<string, number> = {};
  for (const q of dns.queries) {
    const [name, type] = q.split(' ');
    if (!DESTINATIONS.some((d) => name === d.domain || name === d.mxHost)) continue;
    byType[type!] = (byType[type!] ?? 0) + 1;
  }
  return byType;
}
