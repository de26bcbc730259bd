import type { EgressReplyRecord, EgressRules, EgressSiteState, Rate, SiteShape } from '../domain/entities/egress.js';
import { EGRESS_NAME } from '../delivery/egress/pools-setting.js';
import { lowerRate, parseRate } from '../delivery/egress/rate.js';
import { warmupAllowance } from '../delivery/egress/warmup.js';
import { invalid, notFound } from '../errors.js';

export { formatRate } from '../delivery/egress/rate.js';

/**
 * Egress shaping as the operator sees it (GET /admin/egress, DELETE /admin/egress/sites/:site/suspension): the
 * rules file read afresh on every call, as the workers read it, and the state the workers share in PostgreSQL
 * (egress_sites, egress_warmup_usage). The API process sends nothing itself: what it shows is the file's
 * configuration beside what the workers last wrote.
 */

/**
 * A site's name in a path: what the rules file's `[site.*]` keys and the MX grouping make (letters, digits, `.`,
 * `_`, `-`; not starting with `.` or `-`), at most 100 characters (the REST router's longest path parameter).
 * Anything else names no site: a 400 saying so, before any lookup.
 */
export const SITE_NAME = EGRESS_NAME;

/** The rules file as read for one call (loadEgressRules): one refused has its error, and the built-in rules. */
export interface LoadedEgressRules {
  rules: EgressRules;
  path: string;
  /** Why the file was refused; null when it parses. */
  error: string | null;
}

export interface EgressStatusDeps {
  state: {
    listSites(): Promise<EgressSiteState[]>;
    liftSuspension(site: string): Promise<EgressSiteState | null>;
    warmupUsage(day: string): Promise<Map<string, number>>;
  };
  /** Reads the rules file now (delivery/egress/rules-file.ts loadEgressRules with the configured path and pools). */
  loadRules(): LoadedEgressRules | Promise<LoadedEgressRules>;
  now: () => Date;
}

/** A site as shown: the rules file's shape for it and its shared state, the times still ahead only. */
export interface EgressSiteView {
  site: string;
  mx: string[];
  shape: SiteShape;
  /** The rate in force now: the throttle's while it lasts (the lower of the two), else the shape's; null: none. */
  currentRate: Rate | null;
  throttledUntil: Date | null;
  suspendedUntil: Date | null;
  suspendedSources: { address: string; until: Date }[];
  connections: number;
  attemptsLastMinute: number;
  lastReplies: EgressReplyRecord[];
  updatedAt: Date | null;
}

export interface EgressSourceView {
  address: string;
  ehlo: string;
  /** Today's allowance under the warm-up plan; null: no limit. */
  warmupLimitToday: number | null;
  sentToday: number;
}

export interface EgressPoolView {
  name: string;
  streams: string[];
  accounts: string[];
  sources: EgressSourceView[];
}

export interface EgressStatus {
  rules: { path: string; error: string };
  sites: EgressSiteView[];
  pools: EgressPoolView[];
}

export function createEgressStatusService(deps: EgressStatusDeps) {
  /** The site as shown from the rules (its [site.*] shape over the defaults) and its row, if any. */
  function view(rules: EgressRules, name: string, row: EgressSiteState | undefined, now: Date): EgressSiteView {
    const rule = rules.sites.find((s) => s.name === name);
    const shape: SiteShape = { ...rules.defaults, ...definedOf(rule?.shape ?? {}) };
    const ahead = (at: Date | null) => (at !== null && at.getTime() > now.getTime() ? at : null);
    const throttledUntil = ahead(row?.throttledUntil ?? null);
    const throttle = throttledUntil && row?.throttleRate ? parseRate(row.throttleRate) : null;
    return {
      site: name,
      mx: rule?.mx ?? [],
      shape,
      currentRate: throttle ? lowerRate(throttle, shape.rate) : shape.rate,
      throttledUntil,
      suspendedUntil: ahead(row?.suspendedUntil ?? null),
      suspendedSources: (row?.suspendedSources ?? [])
        .map((s) => ({ address: s.address, until: new Date(s.until) }))
        .filter((s) => s.until.getTime() > now.getTime()),
      connections: row?.connections ?? 0,
      attemptsLastMinute: row?.attemptsLastMinute ?? 0,
      lastReplies: row?.lastReplies ?? [],
      updatedAt: row?.updatedAt ?? null,
    };
  }

  function checkedSite(site: string): string {
    if (!SITE_NAME.test(site))
      throw invalid(
        `site must be a site's name as GET /egress lists it (letters, digits, ".", "_" and "-", at most 100 characters); got ${JSON.stringify(site.slice(0, 100))}`,
      );
    return site;
  }

  return {
    async status(): Promise<EgressStatus> {
      const now = deps.now();
      const today = now.toISOString().slice(0, 10);
      const [loaded, rows, usage] = await Promise.all([
        deps.loadRules(),
        deps.state.listSites(),
        deps.state.warmupUsage(today),
      ]);
      const { rules } = loaded;
      const byName = new Map(rows.map((r) => [r.site, r]));
      const names = [...new Set([...rules.sites.map((s) => s.name), ...byName.keys()])].sort();
      return {
        rules: { path: loaded.path, error: loaded.error ?? '' },
        sites: names.map((name) => view(rules, name, byName.get(name), now)),
        pools: [...rules.pools]
          .sort((a, b) => a.name.localeCompare(b.name))
          .map((pool) => ({
            name: pool.name,
            streams: pool.streams,
            accounts: pool.accounts,
            sources: pool.sources.map((s) => ({
              address: s.address,
              ehlo: s.ehlo,
              warmupLimitToday: warmupAllowance(s.warmup, today),
              sentToday: usage.get(s.address) ?? 0,
            })),
          })),
      };
    },

    /** Ends a site's suspension, throttle and source suspensions; a site neither in the file nor in the state is a 404. */
    async resume(site: string): Promise<EgressSiteView> {
      const name = checkedSite(site);
      const [loaded, row] = await Promise.all([deps.loadRules(), deps.state.liftSuspension(name)]);
      if (row === null && !loaded.rules.sites.some((s) => s.name === name)) throw notFound('egress site', name);
      return view(loaded.rules, name, row ?? undefined, deps.now());
    },
  };
}
export type EgressStatusService = ReturnType<typeof createEgressStatusService>;

/** The keys of a partial shape that are set: a [site.*] that leaves one out takes the default's. */
function definedOf(shape: Partial<SiteShape>): Partial<SiteShape> {
  return Object.fromEntries(Object.entries(shape).filter(([, v]) => v !== undefined)) as Partial<SiteShape>;
}
