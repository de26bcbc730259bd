import { describe, expect, it } from 'vitest';
import type { EgressRules, EgressSiteState } from '../../src/domain/entities/egress.js';
import { AppError } from '../../src/errors.js';
import { createEgressStatusService, SITE_NAME, type LoadedEgressRules } from '../../src/services/egress-status.js';

/**
 * GET /admin/egress's use case over a fake state (the repository's seam) and rules as loadEgressRules answers
 * them: which sites are listed, the shape each shows, the times still ahead only, the rate in force under a
 * throttle, the pools' warm-up allowance, and resume's 400 and 404.
 */
const NOW = new Date('2026-11-28T12:00:00.000Z');
const later = (ms: number) => new Date(NOW.getTime() + ms);

const RULES: EgressRules = {
  siteGrouping: 'mx-domain',
  defaults: { connectionLimit: 3, messagesPerConnection: 100, rate: { count: 600, perMs: 60_000 } },
  automation: [],
  sites: [
    {
      name: 'google',
      mx: ['*.google.com'],
      shape: { connectionLimit: 5, rate: { count: 1000, perMs: 60_000 } },
      automation: [],
    },
    { name: 'slow', mx: ['*.slow.test'], shape: { rate: null }, automation: [] },
  ],
  pools: [
    {
      name: 'bulk',
      streams: ['broadcast'],
      accounts: [],
      sources: [
        { address: '127.0.0.3', ehlo: 'mta3.test', warmup: { start: '2026-11-27', daily: [50, 100] } },
        { address: '127.0.0.4', ehlo: 'mta4.test', warmup: null },
      ],
    },
  ],
};

function row(site: string, fields: Partial<EgressSiteState> = {}): EgressSiteState {
  return {
    site,
    throttleRate: null,
    throttledUntil: null,
    suspendedUntil: null,
    suspendedSources: [],
    lastReplies: [],
    connections: 0,
    attemptsLastMinute: 0,
    updatedAt: NOW,
    ...fields,
  };
}

function service(rows: EgressSiteState[], loaded: Partial<LoadedEgressRules> = {}) {
  const lifted: string[] = [];
  const svc = createEgressStatusService({
    state: {
      listSites: async () => rows,
      liftSuspension: async (site) => {
        lifted.push(site);
        const r = rows.find((x) => x.site === site);
        return r
          ? { ...r, throttleRate: null, throttledUntil: null, suspendedUntil: null, suspendedSources: [] }
          : null;
      },
      warmupUsage: async (day) => new Map(day === '2026-11-28' ? [['127.0.0.3', 42]] : []),
    },
    loadRules: () => ({ rules: RULES, path: '/etc/egress.toml', error: null, ...loaded }),
    now: () => NOW,
  });
  return { svc, lifted };
}

describe('egress status', () => {
  it("lists the file's sites and every state row by name, each with its shape over the defaults", async () => {
    const { svc } = service([row('outlook.com', { connections: 2, attemptsLastMinute: 7 })]);
    const status = await svc.status();
    expect(status.rules).toEqual({ path: '/etc/egress.toml', error: '' });
    expect(status.sites.map((s) => s.site)).toEqual(['google', 'outlook.com', 'slow']);
    const [google, outlook, slow] = status.sites;
    expect(google).toMatchObject({
      mx: ['*.google.com'],
      shape: { connectionLimit: 5, messagesPerConnection: 100, rate: { count: 1000, perMs: 60_000 } },
      updatedAt: null,
      connections: 0,
    });
    // A site only the state knows (grouped by its MX domain) has the defaults' shape.
    expect(outlook).toMatchObject({ mx: [], shape: RULES.defaults, connections: 2, attemptsLastMinute: 7 });
    expect(outlook?.updatedAt).toEqual(NOW);
    // `rate = ...` left out of a [site.*] takes the default's; a site may have none (null).
    expect(slow?.shape.rate).toBeNull();
    expect(slow?.currentRate).toBeNull();
  });

  it('shows suspensions and throttles still ahead only, and the throttled rate when it is the lower', async () => {
    const { svc } = service([
      row('google', {
        throttleRate: '60/min',
        throttledUntil: later(60_000),
        suspendedUntil: later(-1),
        suspendedSources: [
          { address: '127.0.0.3', until: later(30_000).toISOString() },
          { address: '127.0.0.4', until: later(-30_000).toISOString() },
        ],
      }),
      // A throttle above the site's own rate leaves the site's (the lower of the two).
      row('outlook.com', { throttleRate: '10000/min', throttledUntil: later(60_000) }),
      row('old.test', { throttleRate: '1/min', throttledUntil: later(-60_000), suspendedUntil: later(-60_000) }),
    ]);
    const sites = new Map((await svc.status()).sites.map((s) => [s.site, s]));
    expect(sites.get('google')).toMatchObject({
      throttledUntil: later(60_000),
      suspendedUntil: null,
      suspendedSources: [{ address: '127.0.0.3', until: later(30_000) }],
      currentRate: { count: 60, perMs: 60_000 },
    });
    expect(sites.get('outlook.com')?.currentRate).toEqual({ count: 600, perMs: 60_000 });
    expect(sites.get('old.test')).toMatchObject({
      throttledUntil: null,
      suspendedUntil: null,
      currentRate: RULES.defaults.rate,
    });
  });

  it("gives each pool's sources today's warm-up allowance and use", async () => {
    const { svc } = service([]);
    const [pool] = (await svc.status()).pools;
    expect(pool).toEqual({
      name: 'bulk',
      streams: ['broadcast'],
      accounts: [],
      sources: [
        // Day 2 of the plan (started yesterday).
        { address: '127.0.0.3', ehlo: 'mta3.test', warmupLimitToday: 100, sentToday: 42 },
        { address: '127.0.0.4', ehlo: 'mta4.test', warmupLimitToday: null, sentToday: 0 },
      ],
    });
  });

  it("answers a refused rules file's error with the rules it loaded instead", async () => {
    const { svc } = service([], { error: 'site.google.automation[0].match: bad regex' });
    const status = await svc.status();
    expect(status.rules.error).toBe('site.google.automation[0].match: bad regex');
    expect(status.sites.map((s) => s.site)).toEqual(['google', 'slow']);
  });

  it('resumes a known site, 404s an unknown one and refuses a name no site can have before any lookup', async () => {
    const { svc, lifted } = service([row('outlook.com', { suspendedUntil: later(60_000) })]);
    expect(await svc.resume('outlook.com')).toMatchObject({ site: 'outlook.com', suspendedUntil: null });
    // A site of the file with no state yet: known, nothing to lift.
    expect(await svc.resume('google')).toMatchObject({ site: 'google', suspendedUntil: null });
    await expect(svc.resume('nowhere.test')).rejects.toMatchObject({
      kind: 'not_found',
      message: 'egress site nowhere.test not found',
    });
    for (const junk of ['', '../x', 'a b', 'x\u0000', '.hidden', 'a'.repeat(101), 'é.test']) {
      const err = await svc.resume(junk).catch((e: unknown) => e);
      expect(err, junk).toBeInstanceOf(AppError);
      expect(err, junk).toMatchObject({ kind: 'validation', message: expect.stringMatching(/^site must be/) });
    }
    expect(lifted).toEqual(['outlook.com', 'google', 'nowhere.test']);
  });
});

describe('site names', () => {
  it('takes the names sites have', () => {
    for (const name of ['google', 'outlook.com', 'mx1.mail.protection.outlook.com', 'yahoo_aol', 'a-b', 'x'])
      expect(SITE_NAME.test(name), name).toBe(true);
  });
});
