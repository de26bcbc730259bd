import { Resolver } from 'node:dns/promises';

/** An MX record: lower preference is tried first (RFC 5321 5.1). */
export interface MxRecord {
  exchange: string;
  priority: number;
}

/**
 * The DNS lookups of delivery and domain verification, through the resolvers of MAILER_DNS_SERVERS (the
 * system's when empty). A name that does not exist, or has no record of the type, answers [] rather than
 * throwing; a resolver that fails or times out throws, so a caller can tell "not published" from "could
 * not ask" (the first fails a check, the second leaves it as it was).
 */
export interface DnsResolver {
  resolveMx(name: string): Promise<MxRecord[]>;
  /** Each record's character strings joined, as SPF, DKIM and DMARC read them. */
  resolveTxt(name: string): Promise<string[]>;
  resolve4(name: string): Promise<string[]>;
  resolve6(name: string): Promise<string[]>;
}

/** Answers that mean "no such record", not "the lookup failed". */
const ABSENT = new Set(['ENOTFOUND', 'ENODATA', 'NXDOMAIN', 'ENONAME']);

/** A lookup's answer, with absence as []. */
async function orNone<T>(lookup: Promise<T[]>): Promise<T[]> {
  try {
    return await lookup;
  } catch (err) {
    if (ABSENT.has((err as NodeJS.ErrnoException).code ?? '')) return [];
    throw err;
  }
}

/** `servers` as MAILER_DNS_SERVERS gives them: `host`, `host:port`, `[v6]:port`. */
export function createDnsResolver(
  servers: string[],
  options: { timeoutMs?: number; tries?: number } = {},
): DnsResolver {
  const resolver = new Resolver({ timeout: options.timeoutMs ?? 5000, tries: options.tries ?? 2 });
  if (servers.length > 0) resolver.setServers(servers);
  return {
    resolveMx: (name) => orNone(resolver.resolveMx(name)),
    resolveTxt: async (name) => (await orNone(resolver.resolveTxt(name))).map((chunks) => chunks.join('')),
    resolve4: (name) => orNone(resolver.resolve4(name)),
    resolve6: (name) => orNone(resolver.resolve6(name)),
  };
}
