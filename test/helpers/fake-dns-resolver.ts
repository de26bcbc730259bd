import type { DnsResolver, MxRecord } from '../../src/net/dns-resolver.js';

/** The records a fake resolver answers with; a name listed in `failing` throws as a broken resolver does. */
export interface FakeZone {
  mx?: Record<string, MxRecord[]>;
  a?: Record<string, string[]>;
  aaaa?: Record<string, string[]>;
  failing?: string[];
}

/** A DnsResolver over fixed records (the seam of direct delivery); `lookups` records every question asked. */
export function fakeDnsResolver(zone: FakeZone): DnsResolver & { lookups: string[] } {
  const lookups: string[] = [];
  const answer = <T>(type: string, table: Record<string, T[]> | undefined, name: string): Promise<T[]> => {
    lookups.push(`${type} ${name}`);
    if (zone.failing?.includes(name))
      return Promise.reject(Object.assign(new Error(`queryA ESERVFAIL ${name}`), { code: 'ESERVFAIL' }));
    return Promise.resolve(table?.[name] ?? []);
  };
  return {
    lookups,
    resolveMx: (name) => answer('MX', zone.mx, name),
    resolve4: (name) => answer('A', zone.a, name),
    resolve6: (name) => answer('AAAA', zone.aaaa, name),
    resolveTxt: (name) => answer('TXT', {}, name),
  };
}
