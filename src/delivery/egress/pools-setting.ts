import { isIP } from 'node:net';
import type { EgressPool } from '../../domain/entities/egress.js';
import { EgressRulesError } from './egress-rules-error.js';

/** A pool's or site's name: what the admin API's paths accept (services/egress-status.ts SITE_NAME). */
export const EGRESS_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$/;

/** The streams a pool of MAILER_EGRESS_POOLS serves by its name alone. */
const STREAM_POOLS = new Set(['transactional', 'broadcast']);

const EHLO_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i;

/**
 * MAILER_EGRESS_POOLS: `name=address[/ehlo],address[/ehlo];name=...` (spaces around the separators allowed).
 * A pool named `transactional` or `broadcast` serves that stream; others serve nothing until the rules file
 * names them (which it cannot: a name in both is refused), so in practice the setting is for stream pools.
 * `defaultEhlo` is the EHLO name of an address given without one (MAILER_HOSTNAME).
 */
export function parsePoolsSetting(setting: string | undefined, defaultEhlo: string): EgressPool[] {
  const pools: EgressPool[] = [];
  const text = setting?.trim() ?? '';
  if (text === '') return pools;
  for (const [i, part] of text.split(';').entries()) {
    const entry = part.trim();
    if (entry === '') continue;
    const eq = entry.indexOf('=');
    if (eq < 0) throw new EgressRulesError(`MAILER_EGRESS_POOLS[${i}]: "${entry}" is not name=address[/ehlo],...`);
    const name = entry.slice(0, eq).trim();
    if (!EGRESS_NAME.test(name)) {
      throw new EgressRulesError(`MAILER_EGRESS_POOLS[${i}]: "${name}" is not a pool name (letters, digits, . _ -)`);
    }
    if (pools.some((p) => p.name === name)) {
      throw new EgressRulesError(`MAILER_EGRESS_POOLS: pool "${name}" is named twice`);
    }
    const sources = entry
      .slice(eq + 1)
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '')
      .map((source) => {
        const slash = source.indexOf('/');
        const address = (slash < 0 ? source : source.slice(0, slash)).trim();
        const ehlo = slash < 0 ? defaultEhlo : source.slice(slash + 1).trim();
        if (isIP(address) === 0) {
          throw new EgressRulesError(`MAILER_EGRESS_POOLS: pool "${name}": "${address}" is not an IP address`);
        }
        if (!EHLO_NAME.test(ehlo)) {
          throw new EgressRulesError(`MAILER_EGRESS_POOLS: pool "${name}": "${ehlo}" is not a host name for EHLO`);
        }
        return { address, ehlo: ehlo.toLowerCase(), warmup: null };
      });
    if (sources.length === 0) throw new EgressRulesError(`MAILER_EGRESS_POOLS: pool "${name}" has no address`);
    const seen = new Set<string>();
    for (const s of sources) {
      if (seen.has(s.address)) {
        throw new EgressRulesError(`MAILER_EGRESS_POOLS: pool "${name}": address ${s.address} is listed twice`);
      }
      seen.add(s.address);
    }
    pools.push({ name, sources, streams: STREAM_POOLS.has(name) ? [name] : [], accounts: [] });
  }
  return pools;
}

export { EHLO_NAME };
