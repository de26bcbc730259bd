import { parsePolicy } from 'mailauth/lib/mta-sts.js';
import type { MtaStsPolicy } from '../domain/entities/egress.js';
import type { Logger } from '../logger.js';
import type { DnsResolver } from './dns-resolver.js';
import { fetchPolicyText, POLICY_TIMEOUT_MS } from './mta-sts-fetch.js';

/**
 * MTA-STS policies (RFC 8461) of recipient domains, as direct delivery asks for them: the `_mta-sts` TXT record
 * says a policy exists and its id, the policy itself comes over HTTPS (mta-sts-fetch.ts), parsed with mailauth's
 * parsePolicy. A policy is kept for its max_age, at most a day (RFC 8461 allows a year: a day bounds how long a
 * policy the domain has since withdrawn, or one we mis-fetched, can hold its mail), and fetched again when the
 * TXT id changes. A fetch that fails keeps a cached policy (RFC 8461 5.1); with none cached there is no policy.
 */
export interface MtaStsPolicies {
  /** The policy in force for `domain` (lower-case ASCII), or null when it has none (or none could be fetched). */
  policyFor(domain: string): Promise<MtaStsPolicy | null>;
}

export interface MtaStsOptions {
  /** Delivery's resolver (the MX cache): the TXT record and the policy host's address. */
  resolver: DnsResolver;
  /** MAILER_MTA_STS_PORT. */
  port: number;
  logger: Pick<Logger, 'info' | 'warn'>;
  /** Fetch policies from loopback and private addresses too (MAILER_MX_ALLOW_PRIVATE: tests, closed networks). */
  allowPrivate?: boolean;
  now?: () => number;
  timeoutMs?: number;
  /** Tests only: CA certificates to verify policy hosts against instead of Node's (see mta-sts-fetch.ts). */
  ca?: string[];
}

/** Our cap on max_age (the RFC's is 31557600 s). */
export const MAX_POLICY_AGE_S = 86_400;
/** After a failed fetch, the domain's policy host is not asked again for this long (each try may cost 10 s). */
export const FETCH_RETRY_MS = 5 * 60_000;
/** Domains whose policy is remembered; the least recently fetched go first beyond it. */
const MAX_DOMAINS = 10_000;

interface Cached {
  id: string;
  policy: MtaStsPolicy;
  expiresAt: number;
}

/** The `id` of a domain's `v=STSv1` TXT record; null when there is none, or several (RFC 8461 3.1: no policy). */
export function policyId(records: string[]): string | null {
  const sts = records.map((r) => r.trim()).filter((r) => /^v=STSv1(;|\s|$)/.test(r));
  if (sts.length !== 1) return null;
  const fields = new Map(
    (sts[0] as string)
      .split(';')
      .map((f) => f.trim())
      .filter(Boolean)
      .map((f) => {
        const eq = f.indexOf('=');
        return [eq < 0 ? f : f.slice(0, eq).trim(), eq < 0 ? '' : f.slice(eq + 1).trim()] as const;
      }),
  );
  const id = fields.get('id') ?? '';
  return /^[a-zA-Z0-9]{1,32}$/.test(id) ? id : null;
}

export function createMtaStsPolicies(options: MtaStsOptions): MtaStsPolicies {
  const now = options.now ?? Date.now;
  const cache = new Map<string, Cached>();
  /** domain -> when a failed fetch of the policy with that id may be tried again. */
  const failed = new Map<string, { id: string; until: number }>();
  const inflight = new Map<string, Promise<MtaStsPolicy | null>>();

  const live = (domain: string): Cached | undefined => {
    const entry = cache.get(domain);
    if (entry && entry.expiresAt > now()) return entry;
    if (entry) cache.delete(domain);
    return undefined;
  };

  const remember = (domain: string, entry: Cached) => {
    cache.delete(domain);
    cache.set(domain, entry);
    if (cache.size > MAX_DOMAINS) cache.delete(cache.keys().next().value as string);
  };

  async function fetchAndParse(domain: string, id: string): Promise<MtaStsPolicy> {
    const text = await fetchPolicyText(domain, {
      resolver: options.resolver,
      port: options.port,
      allowPrivate: options.allowPrivate ?? false,
      timeoutMs: options.timeoutMs ?? POLICY_TIMEOUT_MS,
      ...(options.ca ? { ca: options.ca } : {}),
    });
    const parsed = parsePolicy(text);
    const policy: MtaStsPolicy = {
      mode: parsed.mode,
      mx: parsed.mx ?? [],
      maxAgeSeconds: Math.min(parsed.maxAge ?? 0, MAX_POLICY_AGE_S),
    };
    options.logger.info({ domain, id, mode: policy.mode, mx: policy.mx }, 'MTA-STS policy fetched');
    return policy;
  }

  async function resolve(domain: string): Promise<MtaStsPolicy | null> {
    const cached = live(domain);
    let id: string | null;
    try {
      id = policyId(await options.resolver.resolveTxt(`_mta-sts.${domain}`));
    } catch (err) {
      // Could not ask: the policy we have stays in force (RFC 8461 5.1).
      options.logger.warn({ domain, err: (err as Error).message }, 'MTA-STS TXT lookup failed');
      return cached?.policy ?? null;
    }
    // No record, with a policy cached: the domain may be withdrawing it, but an attacker who strips the TXT
    // record must not downgrade delivery either; RFC 8461 5.1 keeps the cached one until it expires.
    if (id === null) return cached?.policy ?? null;
    if (cached && cached.id === id) return cached.policy;
    const failure = failed.get(domain);
    if (failure && failure.id === id && failure.until > now()) return cached?.policy ?? null;
    try {
      const policy = await fetchAndParse(domain, id);
      failed.delete(domain);
      remember(domain, { id, policy, expiresAt: now() + policy.maxAgeSeconds * 1000 });
      return policy;
    } catch (err) {
      failed.delete(domain);
      failed.set(domain, { id, until: now() + FETCH_RETRY_MS });
      if (failed.size > MAX_DOMAINS) failed.delete(failed.keys().next().value as string);
      options.logger.warn(
        { domain, id, err: (err as Error).message, kept: cached ? cached.policy.mode : null },
        'MTA-STS policy fetch failed',
      );
      return cached?.policy ?? null;
    }
  }

  return {
    policyFor(domain) {
      const key = domain.toLowerCase().replace(/\.$/, '');
      // Many messages to one domain at once ask once.
      let pending = inflight.get(key);
      if (!pending) {
        pending = resolve(key).finally(() => inflight.delete(key));
        inflight.set(key, pending);
      }
      return pending;
    },
  };
}
