import { describe, expect, it } from 'vitest';
import type { EgressRepo, EgressSiteFigures } from '../../src/db/index.js';
import { parseEgressRules } from '../../src/delivery/egress/rules-file.js';
import { createEgressShaper, type EgressShaperRepo } from '../../src/delivery/egress/shaper.js';
import type { EgressRules, EgressSiteState, SourceAddress } from '../../src/domain/entities/egress.js';

/** The shared state at its seam: rows in memory, with the repository's GREATEST-of-untils writes. */
function memoryRepo() {
  const rows = new Map<string, EgressSiteState>();
  const usage = new Map<string, number>();
  const row = (site: string): EgressSiteState => {
    let r = rows.get(site);
    if (!r) {
      r = {
        site,
        throttleRate: null,
        throttledUntil: null,
        suspendedUntil: null,
        suspendedSources: [],
        lastReplies: [],
        connections: 0,
        attemptsLastMinute: 0,
        updatedAt: new Date(),
      };
      rows.set(site, r);
    }
    return r;
  };
  const later = (a: Date | null, b: Date) => (a && a > b ? a : b);
  const writes: string[] = [];
  const repo: EgressShaperRepo & Pick<EgressRepo, 'liftSuspension'> = {
    async listSites() {
      return [...rows.values()].map((r) => structuredClone(r));
    },
    async liftSuspension(site) {
      const r = rows.get(site);
      if (!r) return null;
      Object.assign(r, { throttleRate: null, throttledUntil: null, suspendedUntil: null, suspendedSources: [] });
      return structuredClone(r);
    },
    async suspend(site, until) {
      writes.push(`suspend ${site}`);
      const r = row(site);
      r.suspendedUntil = later(r.suspendedUntil, until);
    },
    async throttle(site, rate, until) {
      writes.push(`throttle ${site} ${rate}`);
      const r = row(site);
      if (!r.throttledUntil || r.throttledUntil <= until) r.throttleRate = rate;
      r.throttledUntil = later(r.throttledUntil, until);
    },
    async suspendSource(site, address, until) {
      writes.push(`suspend-source ${site} ${address}`);
      const r = row(site);
      const old = r.suspendedSources.find((s) => s.address === address);
      const keep = r.suspendedSources.filter((s) => s.address !== address);
      const u = old && old.until > until.toISOString() ? old.until : until.toISOString();
      r.suspendedSources = [...keep, { address, until: u }];
    },
    async flush(site, figures: EgressSiteFigures) {
      const r = row(site);
      r.connections = figures.connections;
      r.attemptsLastMinute = figures.attemptsLastMinute;
      r.lastReplies = [...figures.newReplies, ...r.lastReplies].slice(0, 10);
    },
    async reserveWarmup(address, day, want, allowance) {
      const key = `${address} ${day}`;
      const sent = usage.get(key) ?? 0;
      const granted = Math.max(0, Math.min(want, allowance - sent));
      usage.set(key, sent + granted);
      return granted;
    },
  };
  return { repo, rows, usage, writes };
}

const RULES = `
[default]
connection_limit = 3
messages_per_connection = 100

[[automation]]
match = 'too many connections'
action = "throttle"
rate = "60/min"
duration = "30m"

[site.google]
mx = ["*.google.com"]
connection_limit = 5
[[site.google.automation]]
match = '^421 4\\.7\\.28'
action = "suspend"
duration = "1h"
[[site.google.automation]]
match = '\\[TS01\\]'
action = "suspend-source"
duration = "15m"
[[site.google.automation]]
match = 'over quota'
action = "bounce"

[site.slow]
mx = ["mx.slow.test"]
rate = "600/min"

[pool.bulk]
streams = ["broadcast"]
accounts = ["acc_vip"]
[[pool.bulk.source]]
address = "127.0.0.3"
[[pool.bulk.source]]
address = "127.0.0.4"
warmup = { start = "2026-11-28", daily = [25] }
`;

function setup(text = RULES) {
  let rules: EgressRules = parseEgressRules(text, 'transactional=127.0.0.9', 'me.example');
  let t = Date.parse('2026-11-28T10:00:00Z');
  const { repo, rows, usage, writes } = memoryRepo();
  const shaper = createEgressShaper({
    rules: { current: () => rules },
    repo,
    logger: { warn: () => {}, error: () => {} },
    now: () => new Date(t),
    syncEveryMs: 0,
  });
  return {
    shaper,
    repo,
    rows,
    usage,
    writes,
    advance: (ms: number) => {
      t += ms;
    },
    now: () => t,
    setRules: (next: string) => {
      rules = parseEgressRules(next);
    },
  };
}

const reply = (diagnostic: string) => ({ code: Number(diagnostic.slice(0, 3)) || 0, status: '', diagnostic });
const A: SourceAddress = { address: '127.0.0.3', ehlo: 'me.example', warmup: null };

describe('egress shaper: sites, shapes and sources', () => {
  it('groups MX hosts into sites and answers their shape', () => {
    const { shaper } = setup();
    expect(shaper.siteOf(['alt1.gmail-smtp-in.l.google.com'])).toBe('google');
    expect(shaper.siteOf(['mx1.example.net'])).toBe('example.net');
    expect(shaper.shapeOf('google')).toEqual({ connectionLimit: 5, messagesPerConnection: 100, rate: null });
    expect(shaper.shapeOf('example.net')).toEqual({ connectionLimit: 3, messagesPerConnection: 100, rate: null });
  });

  it('answers the pool of the account before the stream, in turn; none when no pool applies', () => {
    const { shaper } = setup();
    const first = shaper.sourcesFor({ accountId: 'acc_x', stream: 'broadcast' }).map((s) => s.address);
    const second = shaper.sourcesFor({ accountId: 'acc_x', stream: 'broadcast' }).map((s) => s.address);
    expect(first).toEqual(['127.0.0.3', '127.0.0.4']);
    expect(second).toEqual(['127.0.0.4', '127.0.0.3']);
    expect(shaper.sourcesFor({ accountId: 'acc_vip', stream: 'transactional' })).toHaveLength(2);
    expect(shaper.sourcesFor({ accountId: 'acc_x', stream: 'transactional' }).map((s) => s.address)).toEqual([
      '127.0.0.9',
    ]);
    const none = setup('');
    expect(none.shaper.sourcesFor({ accountId: 'acc_x', stream: 'broadcast' })).toEqual([]);
  });
});

describe('egress shaper: the token bucket', () => {
  it('a 60/min throttle lets at most 61 through in any 60 s (one second of burst), and about one a second', async () => {
    const { shaper, advance, now } = setup();
    expect(shaper.observe('example.net', null, reply('421 4.7.0 too many connections'), false)).toEqual({
      kind: 'throttle',
      rate: { count: 60, perMs: 60_000 },
      durationMs: 1_800_000,
    });
    expect(shaper.shapeOf('example.net').rate).toEqual({ count: 60, perMs: 60_000 });
    const admitted: number[] = [];
    let deferral = '';
    // Ten simulated minutes, asking every 50 ms with a varying number of tries, and idle for 5 s every
    // 100 s so that the bucket fills up to its capacity before a burst.
    for (let i = 0; i < 12_000; i++) {
      const idle = i % 2000 < 100;
      for (let k = 0; k < (idle ? 0 : 1 + (i % 3)); k++) {
        const a = await shaper.admit('example.net', null, 1);
        if (a.ok) admitted.push(now());
        else deferral = a.deferral;
      }
      advance(50);
    }
    expect(deferral).toBe('4.4.5 held by egress shaping: site example.net rate 60/min reached');
    // Any closed window [t, t + 60 s]: the rate's 60 plus the one-token bucket's burst.
    let most = 0;
    for (let i = 0, j = 0; i < admitted.length; i++) {
      while (admitted[j]! < admitted[i]! - 60_000) j++;
      most = Math.max(most, i - j + 1);
    }
    expect(most).toBe(61);
    expect(admitted.length).toBeGreaterThanOrEqual(570);
    expect(admitted.length).toBeLessThanOrEqual(601);
  });

  it("the site's own rate: capacity one second's worth, refilled continuously; retryAfter says when a token is back", async () => {
    const { shaper, advance } = setup();
    let ok = 0;
    for (let i = 0; i < 20; i++) if ((await shaper.admit('slow', null, 1)).ok) ok++;
    expect(ok).toBe(10); // 600/min: ten a second
    const no = await shaper.admit('slow', null, 1);
    expect(no).toEqual({
      ok: false,
      deferral: '4.4.5 held by egress shaping: site slow rate 600/min reached',
      retryAfterMs: 100,
    });
    advance(100);
    expect((await shaper.admit('slow', null, 1)).ok).toBe(true);
    expect((await shaper.admit('slow', null, 1)).ok).toBe(false);
  });

  it("a throttle ends: the rate is the rules file's again", async () => {
    const { shaper, advance } = setup();
    shaper.observe('example.net', null, reply('421 too many connections'), false);
    expect((await shaper.admit('example.net', null, 1)).ok).toBe(true);
    expect((await shaper.admit('example.net', null, 1)).ok).toBe(false);
    advance(30 * 60_000);
    expect(shaper.shapeOf('example.net').rate).toBeNull();
    for (let i = 0; i < 50; i++) expect((await shaper.admit('example.net', null, 1)).ok).toBe(true);
  });
});

describe('egress shaper: each action', () => {
  it('suspend: the whole site is held, without a connection, until it ends; written at once', async () => {
    const { shaper, advance, writes, rows } = setup();
    const action = shaper.observe('google', A, reply('421 4.7.28 [127.0.0.3] unusual rate of unsolicited mail'), false);
    expect(action).toEqual({ kind: 'suspend', durationMs: 3_600_000 });
    expect(writes).toEqual(['suspend google']);
    expect(rows.get('google')!.suspendedUntil!.toISOString()).toBe('2026-11-28T11:00:00.000Z');
    const held = await shaper.admit('google', A, 1);
    expect(held).toEqual({
      ok: false,
      deferral: '4.4.5 held by egress shaping: site google suspended until 2026-11-28T11:00:00.000Z',
      retryAfterMs: 3_600_000,
    });
    expect((await shaper.admit('google', null, 1)).ok).toBe(false);
    expect((await shaper.admit('example.net', null, 1)).ok).toBe(true);
    advance(3_600_000);
    expect((await shaper.admit('google', A, 1)).ok).toBe(true);
  });

  it("suspend-source: that address is held at that site, the pool's other address and other sites are not", async () => {
    const { shaper, writes } = setup();
    const B: SourceAddress = { address: '127.0.0.5', ehlo: 'me.example', warmup: null };
    expect(shaper.observe('google', A, reply('421 4.7.0 [TS01] Messages from 127.0.0.3 deferred'), false)).toEqual({
      kind: 'suspend-source',
      durationMs: 900_000,
    });
    expect(writes).toEqual(['suspend-source google 127.0.0.3']);
    expect(await shaper.admit('google', A, 1)).toEqual({
      ok: false,
      deferral:
        '4.4.5 held by egress shaping: source 127.0.0.3 suspended at site google until 2026-11-28T10:15:00.000Z',
      retryAfterMs: 900_000,
    });
    expect((await shaper.admit('google', B, 1)).ok).toBe(true);
    expect((await shaper.admit('example.net', A, 1)).ok).toBe(true);
  });

  it('bounce: answered to the transport, nothing held', async () => {
    const { shaper, writes } = setup();
    expect(shaper.observe('google', A, reply('452 4.2.2 The account is over quota'), false)).toEqual({
      kind: 'bounce',
    });
    expect(writes).toEqual([]);
    expect((await shaper.admit('google', A, 1)).ok).toBe(true);
  });

  it("no match: no action; a site's own rules come before the global ones, and accepted replies match none", async () => {
    const { shaper, writes } = setup();
    expect(shaper.observe('google', A, reply('450 4.2.1 mailbox busy'), false)).toBeNull();
    expect(shaper.observe('google', A, reply('250 2.0.0 OK 4.7.28 in the id'), true)).toBeNull();
    expect(writes).toEqual([]);
    // Matches a site rule (suspend) and the global one (throttle): the site's wins.
    expect(shaper.observe('google', A, reply('421 4.7.28 too many connections'), false)?.kind).toBe('suspend');
    // A local error (code 0) is matched on its text.
    expect(
      shaper.observe('other.test', null, { code: 0, status: '', diagnostic: 'Too many connections from you' }, false)
        ?.kind,
    ).toBe('throttle');
  });

  it('keeps the last 10 failed or matched replies per site and writes them, with the live figures, on sync', async () => {
    const { shaper, rows, advance } = setup();
    shaper.connectionsChanged('google', 2);
    for (let i = 0; i < 12; i++) {
      shaper.observe('google', A, reply(`450 4.2.1 busy ${i}`), false);
      advance(1);
    }
    shaper.observe('google', A, reply('250 2.0.0 OK'), true);
    await shaper.admit('google', A, 1);
    await shaper.sync();
    const row = rows.get('google')!;
    expect(row.connections).toBe(2);
    expect(row.attemptsLastMinute).toBe(1);
    expect(row.lastReplies).toHaveLength(10);
    expect(row.lastReplies[0]).toMatchObject({ code: 450, text: '450 4.2.1 busy 11', source: '127.0.0.3', action: '' });
    // A minute later nobody was admitted: the figure falls back to 0 on the next sync.
    advance(61_000);
    await shaper.sync();
    expect(rows.get('google')!.attemptsLastMinute).toBe(0);
  });
});

describe('egress shaper: shared state', () => {
  it("adopts the rows: another worker's suspension holds here, an operator's lift frees it", async () => {
    const { shaper, repo, now } = setup();
    await repo.suspend('yahoo', new Date(now() + 600_000));
    expect((await shaper.admit('yahoo', null, 1)).ok).toBe(true);
    await shaper.sync();
    expect((await shaper.admit('yahoo', null, 1)).ok).toBe(false);
    await repo.liftSuspension('yahoo');
    await shaper.sync();
    expect((await shaper.admit('yahoo', null, 1)).ok).toBe(true);
  });

  it('a lifted throttle: the rules file rate is back at the next sync', async () => {
    const { shaper, repo } = setup();
    shaper.observe('example.net', null, reply('421 too many connections'), false);
    await shaper.sync();
    expect(shaper.shapeOf('example.net').rate).toEqual({ count: 60, perMs: 60_000 });
    await repo.liftSuspension('example.net');
    await shaper.sync();
    expect(shaper.shapeOf('example.net').rate).toBeNull();
  });
});

describe('egress shaper: warm-up', () => {
  it("reserves in blocks of at most 10 and never passes the day's allowance; a new day has its own", async () => {
    const { shaper, usage, advance } = setup();
    const W: SourceAddress = {
      address: '127.0.0.4',
      ehlo: 'me.example',
      warmup: { start: '2026-11-28', daily: [25, 5] },
    };
    let ok = 0;
    let last = '';
    for (let i = 0; i < 40; i++) {
      const a = await shaper.admit('example.net', W, 1);
      if (a.ok) ok++;
      else last = a.deferral;
      if (i === 0) expect(usage.get('127.0.0.4 2026-11-28')).toBe(10);
    }
    expect(ok).toBe(25);
    expect(usage.get('127.0.0.4 2026-11-28')).toBe(25);
    expect(last).toBe('4.4.5 held by egress shaping: source 127.0.0.4 warm-up allowance of 25 for 2026-11-28 spent');
    advance(14 * 3_600_000); // 2026-11-29 00:00 UTC
    ok = 0;
    for (let i = 0; i < 10; i++) if ((await shaper.admit('example.net', W, 1)).ok) ok++;
    expect(ok).toBe(5);
    advance(86_400_000); // after the plan: no limit, nothing reserved
    for (let i = 0; i < 30; i++) expect((await shaper.admit('example.net', W, 1)).ok).toBe(true);
    expect(usage.get('127.0.0.4 2026-11-30')).toBeUndefined();
  });

  it('nothing before the plan starts', async () => {
    const { shaper } = setup();
    const W: SourceAddress = { address: '127.0.0.4', ehlo: 'me.example', warmup: { start: '2026-12-01', daily: [25] } };
    const a = await shaper.admit('example.net', W, 1);
    expect(a).toMatchObject({ ok: false, retryAfterMs: 14 * 3_600_000 });
  });
});

describe('egress shaper: rules reloaded', () => {
  it('reads the rules in force on every decision', async () => {
    const { shaper, setRules } = setup();
    expect(shaper.observe('example.net', null, reply('421 please slow down'), false)).toBeNull();
    setRules('[[automation]]\nmatch = "slow down"\naction = "suspend"\nduration = "5m"');
    expect(shaper.observe('example.net', null, reply('421 please slow down'), false)).toEqual({
      kind: 'suspend',
      durationMs: 300_000,
    });
    setRules('[default]\nconnection_limit = 9');
    expect(shaper.shapeOf('example.net').connectionLimit).toBe(9);
  });
});
