import type { EgressRepo } from '../../db/index.js';
import type {
  Admission,
  AutomationRule,
  EgressAction,
  EgressContext,
  EgressReplyRecord,
  EgressRules,
  EgressShaper,
  ObservedReply,
  Rate,
  SiteShape,
  SourceAddress,
} from '../../domain/entities/egress.js';
import { formatRate, lowerRate, parseRate } from './rate.js';
import type { EgressRulesSource } from './rules-source.js';
import { siteOf } from './site-grouping.js';
import { msToNextUtcDay, utcDay, warmupAllowance } from './warmup.js';

/** How often the shared state is written (live figures) and read back (every site's row). */
export const EGRESS_SYNC_MS = 2000;
/** Warm-up budget is reserved from the database this many messages at a time (at most what is left). */
export const WARMUP_BLOCK = 10;
/** Replies kept per site. */
const LAST_REPLIES = 10;
const MINUTE_MS = 60_000;

/** What the shaper needs of the shared state (db/repos/egress-repo.ts). */
export type EgressShaperRepo = Pick<
  EgressRepo,
  'listSites' | 'suspend' | 'throttle' | 'suspendSource' | 'flush' | 'reserveWarmup'
>;

export interface EgressShaperOptions {
  /** The rules in force (rules-source.ts): read on every decision, so a reloaded file applies at once. */
  rules: Pick<EgressRulesSource, 'current'>;
  repo: EgressShaperRepo;
  /** A pino logger will do. */
  logger: Record<'warn' | 'error', (obj: object, msg: string) => void>;
  /** The clock (tests drive it). */
  now?: () => Date;
  /** Every how many ms the shared state is synchronised (default 2 s); 0: only by sync() (tests). */
  syncEveryMs?: number;
}

/** The shaper, with the synchronisation its timer runs also callable (tests, and close()). */
export interface EgressShaperHandle extends EgressShaper {
  /** Writes the live figures of sites that changed, then adopts every site's row (suspensions, throttles). */
  sync(): Promise<void>;
}

interface SiteState {
  /** The token bucket: tokens now, when last refilled, and the rate it was filled at (null: no rate). */
  tokens: number;
  refilledAt: number;
  bucketRate: Rate | null;
  throttle: { rate: Rate; until: number } | null;
  suspendedUntil: number;
  /** Source address ('' for the default one) -> suspended until. */
  sources: Map<string, number>;
  /** Newest first: the last replies, and those not yet written. */
  replies: EgressReplyRecord[];
  unwritten: EgressReplyRecord[];
  /** Admission times in the last minute. */
  attempts: number[];
  connections: number;
  /** Figures changed since the last flush (connections, replies), and the attempt count last written. */
  dirty: boolean;
  writtenAttempts: number;
  /** Bumped by every decision this process takes: a row read before it does not undo it. */
  version: number;
}

interface CompiledRules {
  global: { re: RegExp; rule: AutomationRule }[];
  sites: Map<string, { re: RegExp; rule: AutomationRule }[]>;
}

interface WarmupBudget {
  day: string;
  /** Units reserved in the database and not yet spent by this process. */
  units: number;
  /** The day's allowance is all reserved (by any process). */
  spent: boolean;
  reserving: Promise<void> | null;
}

const held = (why: string) => `4.4.5 held by egress shaping: ${why}`;
const sourceName = (address: string) => (address === '' ? 'the default source address' : `source ${address}`);
const capacity = (rate: Rate) => Math.max(1, Math.ceil(rate.count / (rate.perMs / 1000)));
const sameRate = (a: Rate | null, b: Rate | null) => a?.count === b?.count && a?.perMs === b?.perMs;
const EPSILON = 1e-9;

/** The reply as rules read it: "<code> <text>" as the server sent it, or the local error's text (code 0). */
export function replyText(reply: ObservedReply): string {
  const text = reply.diagnostic.trim();
  if (reply.code === 0 || text.startsWith(String(reply.code))) return text;
  return `${reply.code} ${text}`;
}

/**
 * Egress shaping for direct delivery (docs/deliverability.md "Egress shaping"): per destination site a token
 * bucket (the rules file's rate, or a throttle's while it lasts), suspensions of the site or of one source
 * address at it, warm-up budgets per source address reserved from the database in blocks, and the automation
 * rules that turn a receiver's reply into one of those. Decisions are written to egress_sites the moment
 * they are taken, and every 2 s this process writes its live figures and adopts every site's row as the
 * truth, so what one worker decides (or an operator lifts) holds for all.
 */
export function createEgressShaper(options: EgressShaperOptions): EgressShaperHandle {
  const { repo, logger } = options;
  const clock = options.now ?? (() => new Date());
  const rulesNow = (): EgressRules => options.rules.current();
  const sites = new Map<string, SiteState>();
  const budgets = new Map<string, WarmupBudget>();
  const rotation = new Map<string, number>();
  const compiled = new WeakMap<EgressRules, CompiledRules>();
  const writes = new Set<Promise<void>>();
  let syncing: Promise<void> | null = null;
  let lastSyncError = '';

  const stateOf = (site: string): SiteState => {
    let st = sites.get(site);
    if (!st) {
      st = {
        tokens: 0,
        refilledAt: 0,
        bucketRate: null,
        throttle: null,
        suspendedUntil: 0,
        sources: new Map(),
        replies: [],
        unwritten: [],
        attempts: [],
        connections: 0,
        dirty: false,
        writtenAttempts: 0,
        version: 0,
      };
      sites.set(site, st);
    }
    return st;
  };

  const compile = (rules: EgressRules): CompiledRules => {
    let c = compiled.get(rules);
    if (!c) {
      const one = (rule: AutomationRule) => ({ re: new RegExp(rule.pattern, 'i'), rule });
      c = {
        global: rules.automation.map(one),
        sites: new Map(rules.sites.map((s) => [s.name, s.automation.map(one)])),
      };
      compiled.set(rules, c);
    }
    return c;
  };

  const fileShape = (site: string): SiteShape => {
    const rules = rulesNow();
    const named = rules.sites.find((s) => s.name === site);
    return { ...rules.defaults, ...named?.shape };
  };

  const activeThrottle = (st: SiteState, t: number) => (st.throttle && st.throttle.until > t ? st.throttle : null);

  const rateNow = (site: string, st: SiteState, t: number): Rate | null =>
    lowerRate(fileShape(site).rate, activeThrottle(st, t)?.rate ?? null);

  /** Refills the site's bucket to `t` at the rate in force; a new rate keeps no more than its own capacity. */
  const refill = (st: SiteState, rate: Rate, t: number): void => {
    const cap = capacity(rate);
    if (!sameRate(st.bucketRate, rate)) {
      st.tokens = st.bucketRate === null && st.refilledAt === 0 ? cap : Math.min(st.tokens, cap);
      st.bucketRate = rate;
      st.refilledAt = t;
    }
    if (t > st.refilledAt) {
      st.tokens = Math.min(cap, st.tokens + ((t - st.refilledAt) * rate.count) / rate.perMs);
      st.refilledAt = t;
    }
  };

  /** Why nothing may go to `site` from `address` now, or null; the bucket is refilled, not taken from. */
  const blocked = (site: string, st: SiteState, address: string | null, t: number): Admission | null => {
    if (st.suspendedUntil > t) {
      const until = new Date(st.suspendedUntil).toISOString();
      return {
        ok: false,
        deferral: held(`site ${site} suspended until ${until}`),
        retryAfterMs: st.suspendedUntil - t,
      };
    }
    if (address !== null) {
      const until = st.sources.get(address) ?? 0;
      if (until > t) {
        const why = `${sourceName(address)} suspended at site ${site} until ${new Date(until).toISOString()}`;
        return { ok: false, deferral: held(why), retryAfterMs: until - t };
      }
    }
    const rate = rateNow(site, st, t);
    if (rate) {
      refill(st, rate, t);
      if (st.tokens < 1 - EPSILON) {
        const wait = Math.max(1, Math.ceil(((1 - st.tokens) * rate.perMs) / rate.count));
        return { ok: false, deferral: held(`site ${site} rate ${formatRate(rate)} reached`), retryAfterMs: wait };
      }
    } else {
      st.bucketRate = null;
    }
    return null;
  };

  const track = (what: string, write: Promise<void>): void => {
    const p = write.catch((err: unknown) => logger.error({ err }, `egress shaping: writing ${what} failed`));
    writes.add(p);
    void p.finally(() => writes.delete(p));
  };

  /**
   * Adds a block to `budget` from the database (or waits for the one being reserved): one reservation per
   * address at a time, of at most what is left of the allowance.
   */
  const reserveBlock = async (address: string, budget: WarmupBudget, need: number, allowance: number) => {
    if (budget.reserving) return budget.reserving;
    const want = Math.max(WARMUP_BLOCK, need - budget.units);
    budget.reserving = (async () => {
      try {
        const granted = await repo.reserveWarmup(address, budget.day, want, allowance);
        budget.units += granted;
        if (granted < want) budget.spent = true;
      } finally {
        budget.reserving = null;
      }
    })();
    return budget.reserving;
  };

  const budgetOf = (address: string, day: string): WarmupBudget => {
    let b = budgets.get(address);
    if (!b || b.day !== day) {
      b = { day, units: 0, spent: false, reserving: null };
      budgets.set(address, b);
    }
    return b;
  };

  const record = (site: string, st: SiteState, entry: EgressReplyRecord): void => {
    st.replies = [entry, ...st.replies].slice(0, LAST_REPLIES);
    st.unwritten = [entry, ...st.unwritten].slice(0, LAST_REPLIES);
    st.dirty = true;
    sites.set(site, st);
  };

  const take = (site: string, st: SiteState, source: SourceAddress | null, action: EgressAction, t: number) => {
    switch (action.kind) {
      case 'throttle': {
        const until = t + action.durationMs;
        if (!st.throttle || st.throttle.until <= until) st.throttle = { rate: action.rate, until };
        st.version += 1;
        track('a throttle', repo.throttle(site, formatRate(action.rate), new Date(until)));
        return;
      }
      case 'suspend': {
        const until = t + action.durationMs;
        st.suspendedUntil = Math.max(st.suspendedUntil, until);
        st.version += 1;
        track('a suspension', repo.suspend(site, new Date(until)));
        return;
      }
      case 'suspend-source': {
        const address = source?.address ?? '';
        const until = t + action.durationMs;
        st.sources.set(address, Math.max(st.sources.get(address) ?? 0, until));
        st.version += 1;
        track('a source suspension', repo.suspendSource(site, address, new Date(until), new Date(t)));
        return;
      }
      case 'bounce':
        // The transport refuses the transaction's recipients for good; nothing to hold here.
        return;
    }
  };

  const adopt = (st: SiteState, row: Awaited<ReturnType<EgressShaperRepo['listSites']>>[number]) => {
    st.suspendedUntil = row.suspendedUntil?.getTime() ?? 0;
    const rate = row.throttleRate ? parseRate(row.throttleRate) : null;
    st.throttle = rate && row.throttledUntil ? { rate, until: row.throttledUntil.getTime() } : null;
    st.sources = new Map(
      row.suspendedSources
        .map((s) => [s.address, Date.parse(s.until)] as const)
        .filter(([, until]) => Number.isFinite(until)),
    );
  };

  const syncOnce = async (): Promise<void> => {
    const t = clock().getTime();
    for (const [site, st] of sites) {
      st.attempts = st.attempts.filter((a) => a > t - MINUTE_MS);
      if (!st.dirty && st.attempts.length === st.writtenAttempts) continue;
      const replies = st.unwritten;
      st.unwritten = [];
      st.dirty = false;
      st.writtenAttempts = st.attempts.length;
      try {
        await repo.flush(site, {
          connections: st.connections,
          attemptsLastMinute: st.attempts.length,
          newReplies: replies,
        });
      } catch (err) {
        st.unwritten = [...st.unwritten, ...replies].slice(0, LAST_REPLIES);
        st.dirty = true;
        throw err;
      }
    }
    // Decisions written before the read are in it; one taken while reading is newer than the row.
    while (writes.size > 0) await Promise.allSettled([...writes]);
    const versions = new Map([...sites].map(([site, st]) => [site, st.version]));
    const rows = await repo.listSites();
    for (const row of rows) {
      const st = stateOf(row.site);
      if (st.version !== (versions.get(row.site) ?? 0)) continue;
      adopt(st, row);
    }
  };

  const sync = (): Promise<void> => {
    syncing ??= syncOnce().finally(() => {
      syncing = null;
    });
    return syncing;
  };

  const every = options.syncEveryMs ?? EGRESS_SYNC_MS;
  const timer =
    every > 0
      ? setInterval(() => {
          sync().then(
            () => {
              lastSyncError = '';
            },
            (err: unknown) => {
              const message = err instanceof Error ? err.message : String(err);
              if (message !== lastSyncError)
                logger.warn({ err }, 'egress shaping: the shared state could not be synchronised');
              lastSyncError = message;
            },
          );
        }, every)
      : null;
  timer?.unref();

  return {
    siteOf: (mxHosts) => siteOf(rulesNow(), mxHosts),

    shapeOf(site) {
      const shape = fileShape(site);
      const st = sites.get(site);
      const throttle = st ? activeThrottle(st, clock().getTime()) : null;
      return { ...shape, rate: lowerRate(shape.rate, throttle?.rate ?? null) };
    },

    sourcesFor(context: EgressContext) {
      const pools = rulesNow().pools;
      const pool =
        pools.find((p) => p.accounts.includes(context.accountId)) ??
        pools.find((p) => p.streams.includes(context.stream));
      if (!pool || pool.sources.length === 0) return [];
      // Round robin: each call starts at the next address, so a pool's addresses share its mail.
      const n = pool.sources.length;
      const i = (rotation.get(pool.name) ?? 0) % n;
      rotation.set(pool.name, i + 1);
      return [...pool.sources.slice(i), ...pool.sources.slice(0, i)];
    },

    async admit(site, source, recipients) {
      const st = stateOf(site);
      const address = source?.address ?? null;
      const first = blocked(site, st, address, clock().getTime());
      if (first) return first;
      let budget: WarmupBudget | null = null;
      const need = Math.max(1, recipients);
      if (source?.warmup) {
        const at = clock();
        const day = utcDay(at);
        const allowance = warmupAllowance(source.warmup, day);
        if (allowance !== null) {
          budget = budgetOf(source.address, day);
          // Units are taken below without an await in between, so every admission waiting here sees what
          // the others left and reserves again while the allowance lasts.
          while (budget.units < need && !budget.spent) await reserveBlock(source.address, budget, need, allowance);
          if (budget.units < need) {
            const why = `${sourceName(source.address)} warm-up allowance of ${allowance} for ${day} spent`;
            return { ok: false, deferral: held(why), retryAfterMs: msToNextUtcDay(at) };
          }
        }
      }
      // The reservation awaited the database: look again before taking anything.
      const t = clock().getTime();
      const again = budget ? blocked(site, st, address, t) : null;
      if (again) return again;
      if (st.bucketRate) st.tokens -= 1;
      if (budget) budget.units -= need;
      st.attempts.push(t);
      return { ok: true };
    },

    observe(site, source, reply, ok) {
      const st = stateOf(site);
      const t = clock().getTime();
      let action: EgressAction | null = null;
      if (!ok) {
        const c = compile(rulesNow());
        const text = replyText(reply);
        const rule = [...(c.sites.get(site) ?? []), ...c.global].find(({ re }) => re.test(text));
        action = rule?.rule.action ?? null;
        if (action) take(site, st, source, action, t);
      }
      if (!ok || action) {
        record(site, st, {
          at: new Date(t).toISOString(),
          code: reply.code,
          status: reply.status,
          text: reply.diagnostic.slice(0, 500),
          source: source?.address ?? '',
          action: action?.kind ?? '',
        });
      }
      return action;
    },

    connectionsChanged(site, delta) {
      const st = stateOf(site);
      st.connections = Math.max(0, st.connections + delta);
      st.dirty = true;
    },

    sync,

    async close() {
      if (timer) clearInterval(timer);
      try {
        await syncing;
        await sync();
      } catch (err) {
        logger.warn({ err }, 'egress shaping: the last figures could not be written');
      }
    },
  };
}
