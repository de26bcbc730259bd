import { getServers } from 'node:dns';
import net from 'node:net';
import dns2 from 'dns2';
import type { DnsResolver, MxRecord } from './dns-resolver.js';

/**
 * Direct delivery's resolver (the MX cache of issue 28): the same DnsResolver as dns-resolver.ts, but every MX,
 * A, AAAA and TXT answer is kept for its TTL, so a burst of mail to one domain asks once, as Postfix and
 * KumoMTA do with their resolvers. Node's Resolver gives no TTL for MX (nor TXT), so the questions go out through
 * dns2's UDP client (TCP when the answer is truncated) to the servers of MAILER_DNS_SERVERS, or to the system's
 * (node:dns getServers()) when none is set.
 *
 * - A TTL is held to [5 s, 1 h]: a zero TTL must not mean a query per message, and an answer is re-asked
 *   at least hourly whatever the zone says.
 * - Absence (NXDOMAIN, or no record of the type) is kept 60 s (a negative cache short enough that a domain
 *   fixing its DNS is seen soon).
 * - A failure (SERVFAIL, REFUSED, time-out) is never kept: the next lookup asks again.
 * - Lookups of one name and type while one is on the way share it.
 * TXT is cached too, by the same rules: MTA-STS (net/mta-sts.ts) asks `_mta-sts.<domain>` before each delivery.
 * Domain verification keeps the uncached resolver (dns-resolver.ts): a customer fixing a record sees it at once.
 */

export interface CachingResolverOptions {
  /** Per server and try. */
  timeoutMs?: number;
  /** Rounds over the servers before a lookup fails. */
  tries?: number;
  now?: () => number;
}

export const MIN_TTL_S = 5;
export const MAX_TTL_S = 3600;
export const ABSENT_TTL_S = 60;
/** Answers remembered; the oldest go first beyond it (one entry per name and type). */
const MAX_ENTRIES = 50_000;

const { Packet } = dns2;
type RecordType = 'MX' | 'A' | 'AAAA' | 'TXT';

/** A name server as MAILER_DNS_SERVERS or getServers() gives it: `host`, `host:port`, `[v6]:port`, bare v6. */
export function parseServer(server: string): { host: string; port: number } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(server);
  if (bracketed) return { host: bracketed[1] as string, port: Number(bracketed[2] ?? 53) };
  if (net.isIPv6(server)) return { host: server, port: 53 };
  const [host, port] = server.split(':');
  return { host: host as string, port: Number(port ?? 53) };
}

/** A lookup that could not be answered (as Node's resolver errors: `code` and a message naming the question). */
export class DnsLookupError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

interface Entry {
  records: unknown[];
  expiresAt: number;
}

const RCODE_NAMES: Record<number, string> = { 1: 'EFORMERR', 2: 'ESERVFAIL', 4: 'ENOTIMP', 5: 'EREFUSED' };

export function createCachingResolver(servers: string[], options: CachingResolverOptions = {}): DnsResolver {
  const now = options.now ?? Date.now;
  const timeoutMs = options.timeoutMs ?? 5000;
  const tries = options.tries ?? 2;
  // Read once, as Node's Resolver does when created.
  const targets = (servers.length > 0 ? servers : getServers()).map(parseServer);
  const cache = new Map<string, Entry>();
  const inflight = new Map<string, Promise<unknown[]>>();

  /** One question to one server: the answer packet, or a DnsLookupError. */
  async function ask(server: { host: string; port: number }, name: string, type: RecordType): Promise<dns2.Packet> {
    const v6 = net.isIPv6(server.host);
    const client = dns2.UDPClient({
      dns: server.host,
      port: server.port,
      socketType: v6 ? 'udp6' : 'udp4',
      timeout: timeoutMs,
      // dns2's TCP client cannot reach an IPv6 server (it splits the address at ':'): a truncated answer from
      // one is a failure below, and the next server is asked.
      retryOverTCP: !v6,
    });
    let timer: NodeJS.Timeout | undefined;
    // The TCP retry has no time-out of its own.
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new DnsLookupError('ETIMEOUT', `query${type} ETIMEOUT ${name}`)), timeoutMs * 2);
      timer.unref();
    });
    try {
      const response = await Promise.race([client(name, type), deadline]);
      if (response.header.tc) throw new DnsLookupError('EBADRESP', `query${type} EBADRESP ${name} (truncated)`);
      return response;
    } catch (err) {
      if (err instanceof DnsLookupError) throw err;
      const code = (err as NodeJS.ErrnoException).code === 'ETIMEDOUT' ? 'ETIMEOUT' : 'ECONNREFUSED';
      throw new DnsLookupError(code, `query${type} ${code} ${name}: ${(err as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The records of `name` and `type` ([] when absent) and for how long they hold, from the first server that answers. */
  async function lookup(name: string, type: RecordType): Promise<Entry> {
    let last: DnsLookupError = new DnsLookupError('ECONNREFUSED', `query${type} ECONNREFUSED ${name}: no server`);
    for (let round = 0; round < tries; round++) {
      for (const server of targets) {
        try {
          const response = await ask(server, name, type);
          const rcode = response.header.rcode;
          if (rcode === Packet.RCODE.NXDOMAIN) return { records: [], expiresAt: now() + ABSENT_TTL_S * 1000 };
          if (rcode !== Packet.RCODE.NOERROR) {
            const code = RCODE_NAMES[rcode] ?? 'EBADRESP';
            throw new DnsLookupError(code, `query${type} ${code} ${name}`);
          }
          return entryOf(response, type);
        } catch (err) {
          last = err as DnsLookupError;
        }
      }
    }
    throw last;
  }

  function entryOf(response: dns2.Packet, type: RecordType): Entry {
    const wanted = response.answers.filter((r) => r.type === Packet.TYPE[type]);
    if (wanted.length === 0) return { records: [], expiresAt: now() + ABSENT_TTL_S * 1000 };
    // A CNAME on the way holds no longer than its own TTL.
    const chain = response.answers.filter((r) => r.type === Packet.TYPE[type] || r.type === Packet.TYPE.CNAME);
    const ttl = Math.min(MAX_TTL_S, Math.max(MIN_TTL_S, Math.min(...chain.map((r) => r.ttl))));
    const records = wanted.map((r): unknown => {
      if (type === 'MX') return { exchange: r.exchange ?? '', priority: r.priority ?? 0 } satisfies MxRecord;
      if (type === 'TXT') return Array.isArray(r.data) ? r.data.join('') : String(r.data ?? '');
      return r.address ?? '';
    });
    return { records, expiresAt: now() + ttl * 1000 };
  }

  function cached<T>(rawName: string, type: RecordType): Promise<T[]> {
    const name = rawName.toLowerCase().replace(/\.$/, '');
    const key = `${type} ${name}`;
    const hit = cache.get(key);
    if (hit && hit.expiresAt > now()) return Promise.resolve(hit.records as T[]);
    let pending = inflight.get(key);
    if (!pending) {
      pending = lookup(name, type)
        .then((entry) => {
          cache.delete(key);
          cache.set(key, entry);
          if (cache.size > MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
          return entry.records;
        })
        .finally(() => inflight.delete(key));
      inflight.set(key, pending);
    }
    return pending as Promise<T[]>;
  }

  return {
    resolveMx: (name) => cached<MxRecord>(name, 'MX'),
    resolveTxt: (name) => cached<string>(name, 'TXT'),
    resolve4: (name) => cached<string>(name, 'A'),
    resolve6: (name) => cached<string>(name, 'AAAA'),
  };
}
